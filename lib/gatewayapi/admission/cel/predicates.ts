/**
 * Hand-written predicates of the CRD CEL rules (x-kubernetes-validations) admission runs on every
 * route and Gateway, keyed by the rule's message: plain TypeScript is far cheaper than a CEL
 * interpreter on the hot path. admission/crd/schema.ts attaches each to the CRD rule with that message;
 * admission/cel/differential_test.ts runs every one against the CEL library on the golden corpus and its
 * mutations. A rule without one here is evaluated by the CEL library. `has(x)` in CEL is
 * "present"; here that is `!== undefined`.
 * @module
 */
import type { Rule } from "../structural_schema.ts";
import type { HandPredicates } from "../crd/schema.ts";
import { parseDuration } from "../../duration.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const has = (v: unknown) => v !== undefined && v !== null;
const emptyOr = (v: unknown) => !has(v) || v === "";
const count = <T>(list: T[] | undefined, pred: (x: T) => boolean) =>
  (list ?? []).filter(pred).length;

const sameParent = (a: Any, b: Any) =>
  a.group === b.group && a.kind === b.kind && a.name === b.name &&
  ((emptyOr(a.namespace) && emptyOr(b.namespace)) ||
    (has(a.namespace) && has(b.namespace) && a.namespace === b.namespace));

const sameSection = (a: Any, b: Any) =>
  (emptyOr(a.sectionName) && emptyOr(b.sectionName)) ||
  (has(a.sectionName) && has(b.sectionName) && a.sectionName === b.sectionName);

const noPort = (p: Any) => !has(p.port) || p.port === 0;
const samePort = (a: Any, b: Any) =>
  (noPort(a) && noPort(b)) || (has(a.port) && has(b.port) && a.port === b.port);

/** Rules on `spec.parentRefs` (HTTPRoute, GRPCRoute; the experimental channel's, with port). */
const parentRefsRules: Rule[] = [
  {
    message:
      "sectionName or port must be specified when parentRefs includes 2 or more references to the same parent",
    check: (self: Any[]) =>
      self.every((p1) =>
        self.every((p2) =>
          !sameParent(p1, p2) ||
          (emptyOr(p1.sectionName) === emptyOr(p2.sectionName) && noPort(p1) === noPort(p2))
        )
      ),
  },
  {
    message:
      "sectionName or port must be unique when parentRefs includes 2 or more references to the same parent",
    check: (self: Any[]) =>
      self.every((p1) =>
        count(self, (p2) => sameParent(p1, p2) && sameSection(p1, p2) && samePort(p1, p2)) === 1
      ),
  },
];

/** Rule on `spec.rules`: at most 128 matches in all. */
const totalMatchesRule: Rule = {
  message:
    "While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128",
  check: (self: Any[]) => self.reduce((n, r) => n + (r.matches?.length ?? 0), 0) <= 128,
};

/** Rule on every backendRef (and mirror backendRef): a Service reference needs a port. */
const servicePortRule: Rule = {
  message: "Must have port for Service reference",
  check: (self: Any) => !((self.group ?? "") === "" && self.kind === "Service") || has(self.port),
};

/** Rules on one filter: the member named by `type` is set, the others are not. */
function filterMemberRules(members: [type: string, field: string][]): Rule[] {
  return members.flatMap(([type, field]) => [
    {
      message: `filter.${field} must be nil if the filter.type is not ${type}`,
      check: (self: Any) => !(has(self[field]) && self.type !== type),
    },
    {
      message: `filter.${field} must be specified for ${type} filter.type`,
      check: (self: Any) => !(!has(self[field]) && self.type === type),
    },
  ]);
}

/** Rules on a filter list: these filter types may appear at most once. */
function filterRepeatRules(types: string[]): Rule[] {
  return types.map((type) => ({
    message: `${type} filter cannot be repeated`,
    check: (self: Any[]) => count(self, (f) => f.type === type) <= 1,
  }));
}

/** Rule on an HTTPRoute filter list: RequestRedirect and URLRewrite exclude each other. */
const redirectXorRewriteRule: Rule = {
  message:
    "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both",
  check: (self: Any[]) =>
    !(self.some((f) => f.type === "RequestRedirect") && self.some((f) => f.type === "URLRewrite")),
};

/** Rules on a mirror filter. */
const mirrorRules: Rule[] = [{
  message: "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter",
  check: (self: Any) => !(has(self.percent) && has(self.fraction)),
}];

/** Rule on a mirror fraction. */
const fractionRule: Rule = {
  message: "numerator must be less than or equal to denominator",
  check: (self: Any) => self.numerator <= (self.denominator ?? 100),
};

/** Rules on an HTTPPathModifier. */
const pathModifierRules: Rule[] = (["ReplaceFullPath", "ReplacePrefixMatch"] as const)
  .flatMap((type) => {
    const field = type === "ReplaceFullPath" ? "replaceFullPath" : "replacePrefixMatch";
    return [
      {
        message: `${field} must be specified when type is set to '${type}'`,
        check: (self: Any) => self.type !== type || has(self[field]),
      },
      {
        message: `type must be '${type}' when ${field} is set`,
        check: (self: Any) => !has(self[field]) || self.type === type,
      },
    ];
  });

const PATH_CHARS = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;
const plainPath = (self: Any) => self.type === "Exact" || self.type === "PathPrefix";
const pathMust = (message: string, ok: (v: string) => boolean): Rule => ({
  message,
  check: (self: Any) => !plainPath(self) || ok(self.value),
});

/** Rules on an HTTPRoute path match. */
const pathMatchRules: Rule[] = [
  pathMust(
    "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
    (v) => v.startsWith("/"),
  ),
  ...["//", "/./", "/../", "%2f", "%2F", "#"].map((bad) =>
    pathMust(
      `must not contain '${bad}' when type one of ['Exact', 'PathPrefix']`,
      (v) => !v.includes(bad),
    )
  ),
  ...["/..", "/."].map((bad) =>
    pathMust(
      `must not end with '${bad}' when type one of ['Exact', 'PathPrefix']`,
      (v) => !v.endsWith(bad),
    )
  ),
  {
    message: "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
    check: (self: Any) => plainPath(self) || self.type === "RegularExpression",
  },
  pathMust(
    `must only contain valid characters (matching ${PATH_CHARS.source}) for types ['Exact', 'PathPrefix']`,
    (v) => PATH_CHARS.test(v),
  ),
];

const usesPrefixReplace = (f: Any, member: "requestRedirect" | "urlRewrite"): boolean => {
  const path: Any = f?.[member]?.path;
  return path?.type === "ReplacePrefixMatch" && has(path.replacePrefixMatch);
};

const onePrefixMatch = (rule: Any) =>
  rule.matches?.length === 1 && has(rule.matches[0].path) &&
  rule.matches[0].path.type === "PathPrefix";

const prefixReplaceRule = (member: "requestRedirect" | "urlRewrite", inBackends: boolean): Rule => {
  const name = member === "requestRedirect" ? "RequestRedirect" : "URLRewrite";
  const message = inBackends
    ? `Within backendRefs, ${
      member === "urlRewrite" ? "When" : "when"
    } using ${name} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified`
    : `When using ${name} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified`;
  return {
    message,
    check: (self: Any) => {
      const used = inBackends
        ? count(
          self.backendRefs,
          (b: Any) => count(b.filters, (f) => usesPrefixReplace(f, member)) === 1,
        ) === 1
        : count(self.filters, (f) => usesPrefixReplace(f, member)) === 1;
      return !used || onePrefixMatch(self);
    },
  };
};

/** Rules on one HTTPRoute rule. */
const httpRuleRules: Rule[] = [
  {
    message: "RequestRedirect filter must not be used together with backendRefs",
    check: (self: Any) =>
      !(self.backendRefs?.length > 0) ||
      (self.filters ?? []).every((f: Any) => !has(f.requestRedirect)),
  },
  prefixReplaceRule("requestRedirect", false),
  prefixReplaceRule("urlRewrite", false),
  prefixReplaceRule("requestRedirect", true),
  prefixReplaceRule("urlRewrite", true),
];

/** Rule on HTTPRoute rule timeouts. */
const timeoutsRule: Rule = {
  message: "backendRequest timeout cannot be longer than request timeout",
  check: (self: Any) => {
    if (!has(self.request) || !has(self.backendRequest)) return true;
    const request = parseDuration(self.request) ?? 0;
    return request === 0 || (parseDuration(self.backendRequest) ?? 0) <= request;
  },
};

/** Rules on a GRPCMethodMatch. */
const grpcMethodRules: Rule[] = [
  {
    message: "One or both of 'service' or 'method' must be specified",
    check: (self: Any) => !has(self.type) || has(self.service) || has(self.method),
  },
  {
    message:
      "service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)",
    check: (self: Any) =>
      !((!has(self.type) || self.type === "Exact") && has(self.service)) ||
      /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i.test(self.service),
  },
  {
    message: "method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)",
    check: (self: Any) =>
      !((!has(self.type) || self.type === "Exact") && has(self.method)) ||
      /^[A-Za-z_][A-Za-z_0-9]*$/.test(self.method),
  },
];

const protocolIn = (l: Any, list: string[]) => list.includes(l.protocol);
const sameHostname = (a: Any, b: Any) =>
  has(a.hostname) && has(b.hostname)
    ? a.hostname === b.hostname
    : !has(a.hostname) && !has(b.hostname);

/** Rules on `spec.listeners` of a Gateway. */
const listenersRules: Rule[] = [
  {
    message: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
    check: (self: Any[]) =>
      self.every((l) => !protocolIn(l, ["HTTP", "TCP", "UDP"]) || !has(l.tls)),
  },
  {
    message: "tls mode must be Terminate for protocol HTTPS",
    check: (self: Any[]) =>
      self.every((l) =>
        !(l.protocol === "HTTPS" && has(l.tls)) || l.tls.mode === "" || l.tls.mode === "Terminate"
      ),
  },
  {
    message: "tls mode must be set for protocol TLS",
    check: (self: Any[]) =>
      self.every((l) =>
        l.protocol !== "TLS" || (has(l.tls) && has(l.tls.mode) && l.tls.mode !== "")
      ),
  },
  {
    message: "hostname must not be specified for protocols ['TCP', 'UDP']",
    check: (self: Any[]) =>
      self.every((l) => !protocolIn(l, ["TCP", "UDP"]) || emptyOr(l.hostname)),
  },
  {
    message: "Listener name must be unique within the Gateway",
    check: (self: Any[]) => self.every((l1) => count(self, (l2) => l1.name === l2.name) === 1),
  },
  {
    message: "Combination of port, protocol and hostname must be unique for each listener",
    check: (self: Any[]) =>
      self.every((l1) =>
        count(
          self,
          (l2) => l1.port === l2.port && l1.protocol === l2.protocol && sameHostname(l1, l2),
        ) === 1
      ),
  },
];

/** Rule on a listener's tls. */
const listenerTlsRule: Rule = {
  message: "certificateRefs or options must be specified when mode is Terminate",
  check: (self: Any) =>
    self.mode !== "Terminate" || (self.certificateRefs?.length ?? 0) > 0 ||
    Object.keys(self.options ?? {}).length > 0,
};

/** Rules on Gateway `spec.addresses`. */
const addressesRules: Rule[] = (["IPAddress", "Hostname"] as const).map((type) => ({
  message: `${type} values must be unique`,
  check: (self: Any[]) =>
    self.every((a1) =>
      !(a1.type === type && has(a1.value)) ||
      count(self, (a2) => a2.type === a1.type && has(a2.value) && a2.value === a1.value) === 1
    ),
}));

/** The CRD pattern of a Gateway API Hostname (optionally with a leading `*.` label). */
const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const addressHostnameRule: Rule = {
  message:
    `Hostname value must be empty or contain only valid characters (matching ${HOSTNAME.source})`,
  check: (self: Any) =>
    self.type !== "Hostname" || self.value === undefined || HOSTNAME.test(self.value),
};

const FILTER_MEMBERS: [string, string][] = [
  ["RequestHeaderModifier", "requestHeaderModifier"],
  ["ResponseHeaderModifier", "responseHeaderModifier"],
  ["RequestMirror", "requestMirror"],
  ["RequestRedirect", "requestRedirect"],
  ["URLRewrite", "urlRewrite"],
  ["ExtensionRef", "extensionRef"],
  ["CORS", "cors"],
  ["ExternalAuth", "externalAuth"],
];

/** Rule on a route's `spec.rules`: rule names are unique. */
const ruleNamesRule: Rule = {
  message: "Rule name must be unique within the route",
  check: (self: Any[]) =>
    self.every((r1) =>
      !has(r1.name) || count(self, (r2) => has(r2.name) && r1.name === r2.name) === 1
    ),
};

/** Every hand predicate, by the message of the CRD rule it stands for. */
export const HAND_PREDICATES: HandPredicates = Object.freeze(Object.fromEntries(
  [
    ...parentRefsRules,
    totalMatchesRule,
    ruleNamesRule,
    servicePortRule,
    ...filterMemberRules(FILTER_MEMBERS),
    ...filterRepeatRules([
      "CORS",
      "RequestHeaderModifier",
      "ResponseHeaderModifier",
      "RequestRedirect",
      "URLRewrite",
    ]),
    redirectXorRewriteRule,
    ...mirrorRules,
    fractionRule,
    ...pathModifierRules,
    ...pathMatchRules,
    ...httpRuleRules,
    timeoutsRule,
    ...grpcMethodRules,
    ...listenersRules,
    listenerTlsRule,
    ...addressesRules,
    addressHostnameRule,
  ].map((r) => [r.message, r.check]),
));
