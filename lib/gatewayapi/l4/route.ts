/**
 * What the L4 route kinds (TCPRoute, TLSRoute, UDPRoute) share: their spec shape, the conversion
 * of their one rule into weighted backends (invalid ones kept, so their share of connections is
 * refused). They are admitted like every Gateway API kind, by their CRD schemas (kinds.ts).
 * @module
 */
import type { Backends } from "../backends.ts";
import { fail } from "../status/mod.ts";
import { RuleContext } from "../routes/rule_common.ts";
import type { ConvertedRoute } from "../routes/kind.ts";
import type { Obj } from "../object_index.ts";
import type { HTTPBackendRef, ParentReference } from "../types.ts";

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
