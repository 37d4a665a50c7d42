/**
 * IR route actions (forward, redirect, direct) as the action part of an Envoy `Route`.
 * @module
 */
import type {
  IRBackend,
  IRDirectAction,
  IRForwardAction,
  IRMirror,
  IRRedirectAction,
  IRRetry,
  IRRouteMatch,
} from "../../../lib/ir/mod.ts";
import { ClusterNotFound, Denominator, RedirectCode } from "./enums.ts";
import { applyHeaderModifiers } from "./headers.ts";
import { fullPathRewrite, prefixRewrite } from "./rewrite.ts";
import { duration } from "./util.ts";

/** Envoy's RedirectAction.RedirectResponseCode per HTTP status. */
const redirectCodes: Record<number, number> = {
  301: RedirectCode.MOVED_PERMANENTLY,
  302: RedirectCode.FOUND,
  303: RedirectCode.SEE_OTHER,
  307: RedirectCode.TEMPORARY_REDIRECT,
  308: RedirectCode.PERMANENT_REDIRECT,
};

/** Default port per redirect scheme. */
const wellKnownPorts: Record<string, number> = { http: 80, https: 443 };

/**
 * Retry conditions. Besides the configured status codes, Gateway API retries connection errors
 * (disconnect, reset, timeout, TCP failure) whenever a retry stanza is present.
 */
const connectionErrors = "connect-failure,refused-stream,reset";

/** `direct_response` answering `status` with an optional body. */
export function directResponse(
  a: Pick<IRDirectAction, "status" | "body">,
): Record<string, unknown> {
  const out: Record<string, unknown> = { status: a.status };
  if (a.body !== undefined) out.body = { inline_string: a.body };
  return { direct_response: out };
}

/** The listener (or mesh Service port) a route answers on: a redirect's defaults come from it. */
export interface RouteListener {
  scheme: "http" | "https";
  port: number;
}

/** A plain HTTP listener on port 80. */
export const httpPort80: RouteListener = { scheme: "http", port: 80 };

/** The `{redirect}` part of a Route for a RequestRedirect. */
export function redirectAction(
  a: IRRedirectAction,
  match: IRRouteMatch,
  listener: RouteListener = httpPort80,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (a.scheme === "https") out.https_redirect = true;
  else if (a.scheme !== undefined) out.scheme_redirect = a.scheme;
  if (a.hostname !== undefined) out.host_redirect = a.hostname;
  // Gateway API: the redirect port is the filter's, else the scheme's well-known port, else the
  // listener's (the IR always carries it), left out of Location when it is the resulting scheme's
  // well-known port. Host keeps the request's port (only virtual-host matching ignores it) and
  // Envoy reuses it when port_redirect is unset, dropping it only when the scheme changes and it
  // is the old scheme's well-known port. So a well-known port is left unset only when the Host
  // port is harmless: a hostname redirect replaces it, or the listener is on its scheme's
  // well-known port; otherwise it is spelt out (`https://h:443/`, which clients treat alike).
  const scheme = a.scheme ?? listener.scheme;
  const port = a.port ?? wellKnownPorts[scheme];
  const hostPortHarmless = a.hostname !== undefined ||
    listener.port === wellKnownPorts[listener.scheme];
  if (port !== undefined && !(port === wellKnownPorts[scheme] && hostPortHarmless)) {
    out.port_redirect = port;
  }
  if (a.path?.type === "ReplaceFullPath") out.path_redirect = a.path.value;
  else if (a.path) Object.assign(out, prefixRewrite(match, a.path.value));
  out.response_code = redirectCodes[a.statusCode] ?? RedirectCode.FOUND;
  return { redirect: out };
}

function retryPolicy(retry: IRRetry | undefined, perTryTimeoutMs: number | undefined) {
  const out: Record<string, unknown> = {};
  if (retry) {
    out.retry_on = retry.codes.length
      ? `${connectionErrors},retriable-status-codes`
      : connectionErrors;
    if (retry.codes.length) out.retriable_status_codes = [...retry.codes];
    out.num_retries = { value: retry.attempts };
    if (retry.backoffMs) out.retry_back_off = { base_interval: duration(retry.backoffMs) };
  } else {
    // Only a per-try timeout: bound the single attempt, never retry.
    out.num_retries = { value: 0 };
  }
  if (perTryTimeoutMs) out.per_try_timeout = duration(perTryTimeoutMs);
  return out;
}

function mirrorPolicy(m: IRMirror): Record<string, unknown> {
  const out: Record<string, unknown> = { cluster: m.cluster };
  const pct = m.percent ?? 100;
  if (pct < 100) {
    const whole = Number.isInteger(pct);
    out.runtime_fraction = {
      default_value: whole
        ? { numerator: Math.max(0, pct), denominator: Denominator.HUNDRED }
        : { numerator: Math.max(0, Math.round(pct * 10_000)), denominator: Denominator.MILLION },
    };
  }
  return out;
}

function clusterWeight(b: IRBackend): Record<string, unknown> {
  const out: Record<string, unknown> = { name: b.cluster, weight: { value: b.weight } };
  applyHeaderModifiers(out, b.requestHeaders, b.responseHeaders);
  return out;
}

/**
 * The `{route}` part of a Route forwarding to weighted backends, or a `direct_response` 500 when
 * no backend may receive traffic (every weight 0). An invalid backend keeps its weight and names
 * a cluster that does not exist, so `cluster_not_found_response_code` answers 500 for its share.
 */
export function forwardAction(a: IRForwardAction, match: IRRouteMatch): Record<string, unknown> {
  if (a.backends.every((b) => b.weight <= 0)) return directResponse({ status: 500 });
  const out: Record<string, unknown> = {};
  const only = a.backends.length === 1 ? a.backends[0] : undefined;
  if (only && !only.requestHeaders && !only.responseHeaders) out.cluster = only.cluster;
  else out.weighted_clusters = { clusters: a.backends.map(clusterWeight) };
  out.cluster_not_found_response_code = ClusterNotFound.INTERNAL_SERVER_ERROR;
  // Gateway API has no default request timeout: 0s turns off Envoy's default 15 s.
  out.timeout = duration(a.timeoutMs ?? 0);
  if (a.retry || a.perTryTimeoutMs) out.retry_policy = retryPolicy(a.retry, a.perTryTimeoutMs);
  if (a.mirrors.length) out.request_mirror_policies = a.mirrors.map(mirrorPolicy);
  if (a.rewrite?.hostname !== undefined) out.host_rewrite_literal = a.rewrite.hostname;
  const path = a.rewrite?.path;
  if (path?.type === "ReplaceFullPath") Object.assign(out, fullPathRewrite(path.value));
  else if (path) Object.assign(out, prefixRewrite(match, path.value));
  return { route: out };
}
