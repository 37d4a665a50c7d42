/**
 * HTTPRoute rules → converted rules (matches, filters, redirect/rewrite, mirrors, timeouts, retry,
 * weighted backends). Attachment and placement are generic (attachment.ts, build_ir.ts).
 * @module
 */
import type { Backends } from "../backends.ts";
import { parseDuration } from "../duration.ts";
import { httpMatchKey } from "./precedence.ts";
import {
  cannotForward,
  constantAction,
  direct500,
  RuleContext,
  ruleHeaderModifiers,
} from "./rule_common.ts";
import type { ConvertedRoute, ConvertedRule, ListenerContext, RouteKindDef } from "./kind.ts";
import type { Obj } from "../object_index.ts";
import type {
  HTTPKeyValueMatch,
  HTTPPathModifier,
  HTTPRouteFilter,
  HTTPRouteRule,
  HTTPRouteSpec,
} from "../types.ts";
import type {
  IRForwardAction,
  IRKeyValueMatch,
  IRRedirectAction,
  IRRouteMatch,
} from "../../ir/mod.ts";

const RULE_FILTERS = [
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
  "RequestRedirect",
  "URLRewrite",
];

/** Header/query matches in IR form; header names lower-cased, query names kept. */
export function keyValueMatches(
  list: HTTPKeyValueMatch[] | undefined,
  lowercase: boolean,
): IRKeyValueMatch[] {
  return (list ?? []).map((m) => ({
    name: lowercase ? m.name.toLowerCase() : m.name,
    type: m.type ?? "Exact",
    value: m.value,
  }));
}

const pathModifier = (p: HTTPPathModifier | undefined) =>
  p === undefined
    ? undefined
    : p.type === "ReplaceFullPath"
    ? { type: "ReplaceFullPath" as const, value: p.replaceFullPath ?? "/" }
    : { type: "ReplacePrefixMatch" as const, value: p.replacePrefixMatch ?? "/" };

const DEFAULT_PORT: Record<string, number> = { http: 80, https: 443 };

/**
 * The redirect port per the spec: the filter's port; else the scheme's well-known port when a
 * scheme is set; else the listener's port. Always set: translate omits it from Location when it is
 * the default port of the resulting scheme (80 for http, 443 for https).
 */
export function redirectPort(
  scheme: string | undefined,
  port: number | undefined,
  l: ListenerContext,
): number {
  if (port !== undefined) return port;
  if (scheme) return DEFAULT_PORT[scheme] ?? l.port;
  return l.port;
}

function convertMatch(m: NonNullable<HTTPRouteRule["matches"]>[number]): IRRouteMatch {
  const match: IRRouteMatch = {
    path: { type: m.path?.type ?? "PathPrefix", value: m.path?.value ?? "/" },
    headers: keyValueMatches(m.headers, true),
    queryParams: keyValueMatches(m.queryParams, false),
  };
  if (m.method) match.method = m.method;
  return match;
}

function convertRule(ctx: RuleContext, rule: HTTPRouteRule, index: number): ConvertedRule {
  const field = `spec.rules[${index}]`;
  ctx.checkFilters(rule.filters, `${field}.filters`, RULE_FILTERS);
  const prefix = ctx.rulePrefix(index, rule.name);
  const matches = (rule.matches ?? [{}]).map((m, j) => {
    const match = convertMatch(m);
    ctx.checkRegexes(match, `${field}.matches[${j}]`);
    return { name: `${prefix}/match/${j}`, match, key: httpMatchKey(match) };
  });
  const redirect = rule.filters?.find((f) => f.type === "RequestRedirect")?.requestRedirect;
  const rewriteFilter = rule.filters?.find((f) => f.type === "URLRewrite")?.urlRewrite;
  const backends = ctx.weightedBackends(rule.backendRefs, `${field}.backendRefs`);
  const mirrors = ctx.mirrors(rule.filters);
  const headers = ruleHeaderModifiers(rule.filters);
  if (redirect) return { matches, ...headers, action: redirectAction(redirect) };
  const why = cannotForward(backends);
  if (why !== undefined) return { matches, ...headers, action: constantAction(direct500(why)) };
  const forward: IRForwardAction = { kind: "forward", backends, mirrors };
  const request = rule.timeouts?.request !== undefined
    ? parseDuration(rule.timeouts.request)
    : undefined;
  const perTry = rule.timeouts?.backendRequest !== undefined
    ? parseDuration(rule.timeouts.backendRequest)
    : undefined;
  if (request !== undefined) forward.timeoutMs = request;
  if (perTry !== undefined) forward.perTryTimeoutMs = perTry;
  if (rule.retry) {
    forward.retry = { codes: [...(rule.retry.codes ?? [])], attempts: rule.retry.attempts ?? 1 };
    const backoff = rule.retry.backoff !== undefined
      ? parseDuration(rule.retry.backoff)
      : undefined;
    if (backoff !== undefined) forward.retry.backoffMs = backoff;
  }
  if (rewriteFilter) {
    forward.rewrite = {};
    if (rewriteFilter.hostname) forward.rewrite.hostname = rewriteFilter.hostname;
    const path = pathModifier(rewriteFilter.path);
    if (path) forward.rewrite.path = path;
  }
  return { matches, ...headers, action: constantAction(forward) };
}

/**
 * A RequestRedirect rule's action (module level, so the closure holds only the filter: see
 * constantAction).
 */
function redirectAction(
  redirect: NonNullable<HTTPRouteFilter["requestRedirect"]>,
): ConvertedRule["action"] {
  return (l) => {
    const out: IRRedirectAction = { kind: "redirect", statusCode: redirect.statusCode ?? 302 };
    if (redirect.scheme) out.scheme = redirect.scheme;
    if (redirect.hostname) out.hostname = redirect.hostname;
    out.port = redirectPort(redirect.scheme, redirect.port, l);
    const path = pathModifier(redirect.path);
    if (path) out.path = path;
    return out;
  };
}

/** Converts an HTTPRoute's rules; reference failures and unsupported values go to the outcome. */
export function convertHTTPRoute(
  backends: Backends,
  route: Obj<HTTPRouteSpec>,
  mesh = false,
): ConvertedRoute {
  const ns = route.metadata.namespace;
  const ctx = new RuleContext(backends, "HTTPRoute", ns, route.metadata.name, { mesh });
  return ctx.finish((route.spec.rules ?? []).map((rule, i) => convertRule(ctx, rule, i)));
}

/** HTTPRoute in the route-kind registry: HTTP and HTTPS listeners, HTTP connection manager. */
export const HTTP_ROUTE: RouteKindDef = {
  kind: "HTTPRoute",
  protocols: ["HTTP", "HTTPS"],
  chain: "http",
  http2Backends: false,
  features: [
    "HTTPRoute",
    "HTTPRoute303RedirectStatusCode",
    "HTTPRoute307RedirectStatusCode",
    "HTTPRoute308RedirectStatusCode",
    "HTTPRouteBackendProtocolH2C",
    "HTTPRouteBackendRequestHeaderModification",
    "HTTPRouteBackendTimeout",
    "HTTPRouteHostRewrite",
    "HTTPRouteMethodMatching",
    "HTTPRouteNamedRouteRule",
    "HTTPRouteParentRefPort",
    "HTTPRoutePathRedirect",
    "HTTPRoutePathRewrite",
    "HTTPRoutePortRedirect",
    "HTTPRouteQueryParamMatching",
    "HTTPRouteRequestMirror",
    "HTTPRouteRequestMultipleMirrors",
    "HTTPRouteRequestPercentageMirror",
    "HTTPRouteRequestTimeout",
    "HTTPRouteResponseHeaderModification",
    "HTTPRouteRetry",
    "HTTPRouteSchemeRedirect",
  ],
  convert: (backends, route, mesh) => convertHTTPRoute(backends, route, mesh),
};
