/**
 * GRPCRoute rules → converted rules. A method match becomes a path match: service and method →
 * Exact `/<service>/<method>`; service only → PathPrefix `/<service>/`; method only (or
 * RegularExpression) → RegularExpression. Backends speak HTTP/2.
 * @module
 */
import type { Backends } from "../backends.ts";
import { keyValueMatches } from "./http.ts";
import { grpcMatchKey } from "./precedence.ts";
import {
  cannotForward,
  constantAction,
  direct500,
  RuleContext,
  ruleHeaderModifiers,
} from "./rule_common.ts";
import type { ConvertedRoute, ConvertedRule, RouteKindDef } from "./kind.ts";
import type { Obj } from "../object_index.ts";
import type { GRPCRouteMatch, GRPCRouteRule, GRPCRouteSpec } from "../types.ts";
import type { IRForwardAction, IRRouteMatch } from "../../ir/mod.ts";

const RULE_FILTERS = ["RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror"];
const ANY_SEGMENT = "[^/]+";
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The IR path match of a GRPCRoute method match. */
export function grpcPath(method: GRPCRouteMatch["method"]): IRRouteMatch["path"] {
  const service = method?.service, name = method?.method;
  if (!service && !name) return { type: "PathPrefix", value: "/" };
  if ((method?.type ?? "Exact") === "Exact") {
    if (service && name) return { type: "Exact", value: `/${service}/${name}` };
    if (service) return { type: "PathPrefix", value: `/${service}/` };
    return { type: "RegularExpression", value: `/${ANY_SEGMENT}/${escapeRegex(name!)}` };
  }
  return { type: "RegularExpression", value: `/${service || ANY_SEGMENT}/${name || ANY_SEGMENT}` };
}

function convertRule(ctx: RuleContext, rule: GRPCRouteRule, index: number): ConvertedRule {
  const field = `spec.rules[${index}]`;
  ctx.checkFilters(rule.filters, `${field}.filters`, RULE_FILTERS);
  const prefix = ctx.rulePrefix(index, rule.name);
  const matches = (rule.matches?.length ? rule.matches : [{}]).map((m, j) => {
    const match: IRRouteMatch = {
      path: grpcPath(m.method),
      headers: keyValueMatches(m.headers, true),
      queryParams: [],
    };
    ctx.checkRegexes(match, `${field}.matches[${j}]`);
    const key = grpcMatchKey(m.method?.service, m.method?.method, match.headers.length);
    return { name: `${prefix}/match/${j}`, match, key };
  });
  const backends = ctx.weightedBackends(rule.backendRefs, `${field}.backendRefs`);
  const mirrors = ctx.mirrors(rule.filters);
  const why = cannotForward(backends);
  const forward: IRForwardAction = { kind: "forward", backends, mirrors, grpc: true };
  const action = constantAction(why === undefined ? forward : direct500(why));
  return { matches, ...ruleHeaderModifiers(rule.filters), action };
}

/** Converts a GRPCRoute's rules; a GRPCRoute without rules gets none. */
export function convertGRPCRoute(
  backends: Backends,
  route: Obj<GRPCRouteSpec>,
  mesh = false,
): ConvertedRoute {
  const ns = route.metadata.namespace;
  const ctx = new RuleContext(backends, "GRPCRoute", ns, route.metadata.name, {
    mesh,
    http2: true,
  });
  return ctx.finish((route.spec.rules ?? []).map((rule, i) => convertRule(ctx, rule, i)));
}

/** GRPCRoute in the route-kind registry: HTTP and HTTPS listeners, HTTP/2 backends. */
export const GRPC_ROUTE: RouteKindDef = {
  kind: "GRPCRoute",
  protocols: ["HTTP", "HTTPS"],
  chain: "http",
  http2Backends: true,
  features: ["GRPCRoute", "GRPCRouteNamedRouteRule"],
  convert: (backends, route, mesh) => convertGRPCRoute(backends, route, mesh),
};
