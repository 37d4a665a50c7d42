/**
 * What the L4 route kinds (TCPRoute, TLSRoute, UDPRoute) share: their spec shape, the conversion
 * of their one rule into weighted backends (invalid ones kept, so their share of connections is
 * refused), and an interim admission until the vendored CRD schemas describe these kinds.
 * @module
 */
import type { Backends } from "./backends.ts";
import { fail } from "./conditions.ts";
import { HOSTNAME } from "./schemas.ts";
import { type ConvertedRoute, RuleContext } from "./rule_common.ts";
import type { Obj } from "./snapshot.ts";
import type { HTTPBackendRef, KubeObject, ParentReference, Problem } from "./types.ts";

/** One rule of an L4 route: weighted backendRefs, no matches. */
export interface L4RouteRule {
  name?: string;
  backendRefs?: HTTPBackendRef[];
}

/** TCPRoute / UDPRoute spec (v1alpha2); TLSRoute adds `hostnames` (SNI). */
export interface L4RouteSpec {
  parentRefs?: ParentReference[];
  hostnames?: string[];
  rules?: L4RouteRule[];
}

/**
 * Converts an L4 route: the backends of its first rule. More than one rule is unsupported
 * (Accepted=False UnsupportedValue): with no matches, a second rule could never be chosen.
 */
export function convertL4Route(
  backends: Backends,
  kind: string,
  transport: "TCP" | "UDP",
  route: Obj<L4RouteSpec>,
  mesh: boolean,
): ConvertedRoute {
  const ctx = new RuleContext(backends, kind, route.metadata.namespace, route.metadata.name, {
    mesh,
    transport,
  });
  const rules = route.spec.rules ?? [];
  const l4Backends = ctx.weightedBackends(rules[0]?.backendRefs, "spec.rules[0].backendRefs");
  for (const [i, b] of (rules[0]?.backendRefs ?? []).entries()) {
    if (b.filters?.length) {
      ctx.unsupported.push(`spec.rules[0].backendRefs[${i}].filters: not supported on ${kind}`);
    }
  }
  const converted = { ...ctx.finish([]), l4Backends };
  if (rules.length > 1) {
    const why = `spec.rules: ${kind} supports one rule, got ${rules.length}`;
    converted.unsupported = fail(
      "UnsupportedValue",
      converted.unsupported ? `${converted.unsupported.message}; ${why}` : why,
    );
  }
  return converted;
}

/** What the interim admission checks of one L4 kind. */
export interface L4Admission {
  kind: string;
  apiVersions: readonly string[];
  /** Most rules the CRD allows (TLSRoute v1: 1; TCPRoute, UDPRoute: 16). */
  maxRules: number;
  hostnames: boolean;
}

/**
 * Interim admission of an L4 route (the CRD schemas aether checks do not list these kinds yet):
 * apiVersion, name, default namespace, parentRef defaults, 1..maxRules rules of 1..16 backendRefs
 * with a port, hostnames by the CRD pattern. Replaced by the CRD schema once it covers them.
 */
export function admitL4(a: L4Admission, raw: KubeObject): { obj: KubeObject; problems: Problem[] } {
  const meta = (raw.metadata ?? {}) as KubeObject["metadata"];
  const name = typeof meta.name === "string" ? meta.name : "";
  const namespace = typeof meta.namespace === "string" && meta.namespace
    ? meta.namespace
    : "default";
  const problems: Problem[] = [];
  const problem = (field: string, message: string) =>
    problems.push({ kind: a.kind, namespace, name, field, message });
  if (!a.apiVersions.includes(raw.apiVersion)) {
    problem(
      "apiVersion",
      `unsupported apiVersion ${raw.apiVersion}: use ${a.apiVersions.join(" or ")}`,
    );
  }
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name)) {
    problem("metadata.name", "must be a lowercase RFC 1123 subdomain");
  }
  const spec = (raw as { spec?: L4RouteSpec }).spec;
  if (typeof spec !== "object" || spec === null) {
    problem("spec", "required field is missing");
    return { obj: raw, problems };
  }
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  if (rules.length < 1 || rules.length > a.maxRules) {
    problem("spec.rules", `must have 1 to ${a.maxRules} rules`);
  }
  for (const [i, rule] of rules.entries()) {
    const refs = Array.isArray(rule?.backendRefs) ? rule.backendRefs : [];
    if (refs.length < 1 || refs.length > 16) {
      problem(`spec.rules[${i}].backendRefs`, "must have 1 to 16 backendRefs");
    }
    for (const [j, ref] of refs.entries()) {
      const bad = typeof ref?.name !== "string" || !ref.name ||
        ((ref.kind ?? "Service") === "Service" && (ref.group ?? "") === "" &&
          !Number.isInteger(ref.port)) ||
        (ref.weight !== undefined &&
          (!Number.isInteger(ref.weight) || ref.weight < 0 || ref.weight > 1000000));
      if (bad) {
        problem(
          `spec.rules[${i}].backendRefs[${j}]`,
          "needs a name, a port for a Service, and a weight of 0 to 1000000",
        );
      }
    }
  }
  const hostnames = spec.hostnames ?? [];
  if (!a.hostnames && hostnames.length > 0) problem("spec.hostnames", "unknown field");
  for (const [i, h] of hostnames.entries()) {
    if (typeof h !== "string" || h.length > 253 || !HOSTNAME.test(h)) {
      problem(`spec.hostnames[${i}]`, `${JSON.stringify(h)} is not a valid hostname`);
    }
  }
  const parentRefs = (Array.isArray(spec.parentRefs) ? spec.parentRefs : []).map((p) => ({
    group: "gateway.networking.k8s.io",
    kind: "Gateway",
    ...p,
  }));
  const obj = {
    ...raw,
    metadata: { ...meta, namespace },
    spec: { ...spec, parentRefs },
  } as KubeObject;
  return { obj, problems };
}
