/**
 * Rule conversion shared by HTTPRoute and GRPCRoute: header modifiers, weighted backends (invalid
 * ones kept with a non-existent cluster so their share answers 500), mirrors. The converted shapes
 * they produce are routes/kind.ts's.
 * @module
 */
import { matchRegexProblems } from "./re2.ts";
import type { Backends, ClusterUse, NameConflict } from "../backends.ts";
import { fail, type Outcome, pass } from "../status/mod.ts";
import type { ConvertedRoute, ConvertedRule, RouteKind } from "./kind.ts";
import type {
  BackendObjectReference,
  HTTPBackendRef,
  HTTPHeaderFilter,
  HTTPRouteFilter,
} from "../types.ts";
import type {
  IRBackend,
  IRDirectAction,
  IRForwardAction,
  IRHeaderModifier,
  IRMirror,
  IRRouteMatch,
} from "../../ir/mod.ts";

/** Collects reference failures and unsupported values while a route's rules are converted. */
export class RuleContext {
  readonly refErrors: Outcome[] = [];
  readonly unsupported: string[] = [];
  readonly clusters: ClusterUse[] = [];
  readonly conflicts: NameConflict[] = [];

  constructor(
    readonly backends: Backends,
    readonly kind: RouteKind,
    readonly namespace: string,
    readonly name: string,
    /**
     * `mesh`: converting for Service parents (GAMMA), so cross-namespace backendRefs need no
     * ReferenceGrant; `http2`: the kind's backends speak HTTP/2 (gRPC); `transport`: an L4
     * kind's Service port protocol (any appProtocol is then fine).
     */
    readonly options: { mesh?: boolean; http2?: boolean; transport?: "TCP" | "UDP" } = {},
  ) {}

  /** IR name prefix of rule `index` (its name when it has one). */
  rulePrefix(index: number, name: string | undefined): string {
    return `${this.kind}/${this.namespace}/${this.name}/rule/${name ?? index}`;
  }

  /** Resolves weighted backendRefs; invalid ones stay with a non-existent cluster. */
  weightedBackends(refs: HTTPBackendRef[] | undefined, field: string): IRBackend[] {
    return (refs ?? []).map((ref, i) => {
      const r = this.#resolve(ref);
      if (r.error) this.refErrors.push(r.error);
      const backend: IRBackend = { cluster: r.cluster, weight: ref.weight ?? 1 };
      if (r.error) backend.invalid = `${r.error.reason}: ${r.error.message}`;
      for (let j = 0; j < (ref.filters?.length ?? 0); j++) {
        const f = ref.filters![j];
        if (f.type === "RequestHeaderModifier" && f.requestHeaderModifier) {
          backend.requestHeaders = headerModifier(f.requestHeaderModifier);
        } else if (f.type === "ResponseHeaderModifier" && f.responseHeaderModifier) {
          backend.responseHeaders = headerModifier(f.responseHeaderModifier);
        } else {this.unsupported.push(
            `${field}[${i}].filters[${j}]: ${f.type} is not supported on a backendRef`,
          );}
      }
      return backend;
    });
  }

  /** Mirrors of a rule's RequestMirror filters; invalid mirror targets are dropped. */
  mirrors(filters: HTTPRouteFilter[] | undefined): IRMirror[] {
    const out: IRMirror[] = [];
    for (const f of filters ?? []) {
      const m = f.requestMirror;
      if (f.type !== "RequestMirror" || !m) continue;
      const r = this.#resolve(m.backendRef);
      if (r.error) {
        this.refErrors.push(r.error);
        continue;
      }
      const mirror: IRMirror = { cluster: r.cluster };
      if (m.percent !== undefined) mirror.percent = m.percent;
      else if (m.fraction) {
        mirror.percent = (m.fraction.numerator / (m.fraction.denominator ?? 100)) * 100;
      }
      out.push(mirror);
    }
    return out;
  }

  #resolve(ref: BackendObjectReference) {
    const o = this.options; // (its mesh and transport are resolve's options)
    const r = this.backends.resolve(ref, this.kind, this.namespace, o.http2 ?? false, o);
    if (r.use) this.clusters.push(r.use);
    if (r.conflict) this.conflicts.push(r.conflict);
    return r;
  }

  /** Marks filter types this kind does not implement (ExtensionRef, CORS) as unsupported. */
  checkFilters(filters: HTTPRouteFilter[] | undefined, field: string, supported: string[]) {
    for (let i = 0; i < (filters?.length ?? 0); i++) {
      const type = filters![i].type;
      if (!supported.includes(type)) {
        this.unsupported.push(`${field}[${i}]: filter type ${type} is not supported`);
      }
    }
  }

  /** Marks regular expressions Envoy's RE2 cannot compile as unsupported. */
  checkRegexes(match: IRRouteMatch, field: string): void {
    if (!hasRegex(match)) return;
    this.unsupported.push(...matchRegexProblems(match, field));
  }

  /** The route-level outcomes once every rule is converted. */
  finish(rules: ConvertedRule[]): ConvertedRoute {
    const resolvedRefs = this.refErrors.length === 0
      ? pass("ResolvedRefs", "all references resolved")
      : fail(this.refErrors[0].reason, this.refErrors.map((e) => e.message).join("; "));
    const route: ConvertedRoute = {
      rules,
      clusters: this.clusters,
      conflicts: this.conflicts,
      resolvedRefs,
    };
    if (this.unsupported.length > 0) {
      route.unsupported = fail("UnsupportedValue", this.unsupported.join("; "));
    }
    return route;
  }
}

const isRegex = (m: { type: string }) => m.type === "RegularExpression";

/** Whether a match has a regular expression (the path, a header or a query parameter). */
const hasRegex = (m: IRRouteMatch) =>
  isRegex(m.path) || m.headers.some(isRegex) || m.queryParams.some(isRegex);

/** An IR header modifier with lower-cased header names. */
export function headerModifier(f: HTTPHeaderFilter): IRHeaderModifier {
  const pairs = (list?: { name: string; value: string }[]) =>
    (list ?? []).map((h) => ({ name: h.name.toLowerCase(), value: h.value }));
  return {
    set: pairs(f.set),
    add: pairs(f.add),
    remove: (f.remove ?? []).map((n) => n.toLowerCase()),
  };
}

/** The request/response header modifiers of a rule's filters. */
export function ruleHeaderModifiers(filters: HTTPRouteFilter[] | undefined) {
  const out: { requestHeaders?: IRHeaderModifier; responseHeaders?: IRHeaderModifier } = {};
  for (const f of filters ?? []) {
    if (f.type === "RequestHeaderModifier" && f.requestHeaderModifier) {
      out.requestHeaders = headerModifier(f.requestHeaderModifier);
    }
    if (f.type === "ResponseHeaderModifier" && f.responseHeaderModifier) {
      out.responseHeaders = headerModifier(f.responseHeaderModifier);
    }
  }
  return out;
}

/**
 * A rule's action that is always `action`. Made here, not inside a rule's conversion, so the
 * closure holds only `action`: a closure made inside a conversion shares that function's scope,
 * whose RuleContext holds the revision's Backends and through them the whole object index of that
 * revision — every converted route kept by the memos would keep its revision's objects alive, and
 * they the older conversions and theirs (the controller grew ≈ 14 KB per GAMMA route edit until
 * it ran out of heap).
 */
export function constantAction(
  action: IRForwardAction | IRDirectAction,
): ConvertedRule["action"] {
  return () => action;
}

/** 500 answer when a rule has nothing valid to forward to. */
export function direct500(body: string): IRDirectAction {
  return { kind: "direct", status: 500, body };
}

/**
 * Why these backends cannot carry traffic (no backendRefs, every one invalid, total weight 0), or
 * undefined when they can: then the rule forwards, invalid shares answering 500.
 */
export function cannotForward(backends: IRBackend[]): string | undefined {
  if (backends.length === 0) return "no backendRefs";
  if (backends.every((b) => b.invalid)) return "every backendRef is invalid";
  if (backends.reduce((n, b) => n + b.weight, 0) === 0) return "every backendRef has weight 0";
  return undefined;
}
