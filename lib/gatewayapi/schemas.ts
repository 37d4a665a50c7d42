/**
 * The structural schemas (with defaults and CEL rules) of the kinds aether reads: the Gateway API
 * v1.5.1 standard-channel CRDs (plus HTTPRoute `retry`, experimental, accepted anyway) and the
 * parts of core kinds aether uses. Facts (bounds, patterns, defaults, messages) come from the CRDs.
 * @module
 */
import { any, arr, bool, int, map, obj, type Schema, str } from "./schema.ts";
import * as cel from "./cel_rules.ts";
import { DURATION_PATTERN } from "./duration.ts";
import { GATEWAY_GROUP } from "./types.ts";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const GROUP = /^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KIND = /^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** The CRD pattern of a Gateway API Hostname (optionally with a leading `*.` label). */
export const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;
const CONTROLLER_NAME =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$/;
const PROTOCOL =
  /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$/;

const group = (dflt?: string) => str({ max: 253, pattern: GROUP, default: dflt });
const kind = (dflt?: string) => str({ min: 1, max: 63, pattern: KIND, default: dflt });
const namespace = () => str({ min: 1, max: 63, pattern: NAMESPACE });
const objectName = () => str({ min: 1, max: 253 });
const sectionName = () => str({ min: 1, max: 253, pattern: DNS_SUBDOMAIN });
const port = () => int({ min: 1, max: 65535 });
const hostname = () => str({ min: 1, max: 253, pattern: HOSTNAME });
const preciseHostname = () => str({ min: 1, max: 253, pattern: DNS_SUBDOMAIN });
const duration = () => str({ pattern: DURATION_PATTERN });

const labelSelector = () =>
  obj({
    matchLabels: map(str()),
    matchExpressions: arr(
      obj({
        key: str(),
        operator: str({ enum: ["In", "NotIn", "Exists", "DoesNotExist"] }),
        values: arr(str()),
      }, { required: ["key", "operator"] }),
    ),
  });

const parentRef = () =>
  obj({
    group: group(GATEWAY_GROUP),
    kind: kind("Gateway"),
    namespace: namespace(),
    name: objectName(),
    sectionName: sectionName(),
    port: port(),
  }, { required: ["name"] });

const backendRef = (extra: Record<string, Schema> = {}) =>
  obj({
    group: group(""),
    kind: kind("Service"),
    name: objectName(),
    namespace: namespace(),
    port: port(),
    ...extra,
  }, { required: ["name"], rules: [cel.servicePortRule] });

const headerList = () =>
  arr(
    obj({
      name: str({ min: 1, max: 256, pattern: HEADER_NAME }),
      value: str({ min: 1, max: 4096 }),
    }, {
      required: ["name", "value"],
    }),
    { max: 16 },
  );

const headerFilter = () =>
  obj({ set: headerList(), add: headerList(), remove: arr(str(), { max: 16 }) });

const pathModifier = () =>
  obj({
    type: str({ enum: ["ReplaceFullPath", "ReplacePrefixMatch"] }),
    replaceFullPath: str({ max: 1024 }),
    replacePrefixMatch: str({ max: 1024 }),
  }, { required: ["type"], rules: cel.pathModifierRules });

const mirror = () =>
  obj({
    backendRef: backendRef(),
    percent: int({ min: 0, max: 100 }),
    fraction: obj({ numerator: int({ min: 0 }), denominator: int({ min: 1, default: 100 }) }, {
      required: ["numerator"],
      rules: [cel.fractionRule],
    }),
  }, { required: ["backendRef"], rules: cel.mirrorRules });

const extensionRef = () =>
  obj({ group: group(), kind: kind(), name: objectName() }, {
    required: ["group", "kind", "name"],
  });

const HTTP_FILTERS: [string, string][] = [
  ["RequestHeaderModifier", "requestHeaderModifier"],
  ["ResponseHeaderModifier", "responseHeaderModifier"],
  ["RequestMirror", "requestMirror"],
  ["RequestRedirect", "requestRedirect"],
  ["URLRewrite", "urlRewrite"],
  ["ExtensionRef", "extensionRef"],
];
const GRPC_FILTERS = HTTP_FILTERS.filter(([t]) => !["RequestRedirect", "URLRewrite"].includes(t));

const httpFilters = () =>
  arr(
    obj({
      type: str({ enum: [...HTTP_FILTERS.map(([t]) => t), "CORS"] }),
      requestHeaderModifier: headerFilter(),
      responseHeaderModifier: headerFilter(),
      requestMirror: mirror(),
      requestRedirect: obj({
        scheme: str({ enum: ["http", "https"] }),
        hostname: preciseHostname(),
        path: pathModifier(),
        port: port(),
        statusCode: int({ enum: [301, 302, 303, 307, 308], default: 302 }),
      }),
      urlRewrite: obj({ hostname: preciseHostname(), path: pathModifier() }),
      extensionRef: extensionRef(),
      cors: any(),
    }, { required: ["type"], rules: cel.filterMemberRules([...HTTP_FILTERS, ["CORS", "cors"]]) }),
    {
      max: 16,
      rules: [
        cel.redirectXorRewriteRule,
        ...cel.filterRepeatRules([
          "CORS",
          "RequestHeaderModifier",
          "ResponseHeaderModifier",
          "RequestRedirect",
          "URLRewrite",
        ]),
      ],
    },
  );

const grpcFilters = () =>
  arr(
    obj({
      type: str({ enum: GRPC_FILTERS.map(([t]) => t) }),
      requestHeaderModifier: headerFilter(),
      responseHeaderModifier: headerFilter(),
      requestMirror: mirror(),
      extensionRef: extensionRef(),
    }, { required: ["type"], rules: cel.filterMemberRules(GRPC_FILTERS) }),
    { max: 16, rules: cel.filterRepeatRules(["RequestHeaderModifier", "ResponseHeaderModifier"]) },
  );

const keyValueMatch = (maxValue: number) =>
  obj({
    type: str({ enum: ["Exact", "RegularExpression"], default: "Exact" }),
    name: str({ min: 1, max: 256, pattern: HEADER_NAME }),
    value: str({ min: 1, max: maxValue }),
  }, { required: ["name", "value"] });

const routeCommon = () => ({
  parentRefs: arr(parentRef(), { max: 32, rules: cel.parentRefsRules }),
  hostnames: arr(hostname(), { max: 16 }),
});

const DEFAULT_MATCH = { path: { type: "PathPrefix", value: "/" } };

const httpRouteSpec = obj({
  ...routeCommon(),
  rules: arr(
    obj({
      name: sectionName(),
      matches: arr(
        obj({
          path: obj({
            type: str({
              enum: ["Exact", "PathPrefix", "RegularExpression"],
              default: "PathPrefix",
            }),
            value: str({ max: 1024, default: "/" }),
          }, { default: DEFAULT_MATCH.path, rules: cel.pathMatchRules }),
          headers: arr(keyValueMatch(4096), { max: 16 }),
          queryParams: arr(keyValueMatch(1024), { max: 16 }),
          method: str({
            enum: ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"],
          }),
        }),
        { max: 64, default: [DEFAULT_MATCH] },
      ),
      filters: httpFilters(),
      backendRefs: arr(
        backendRef({ weight: int({ min: 0, max: 1_000_000, default: 1 }), filters: httpFilters() }),
        {
          max: 16,
        },
      ),
      timeouts: obj({ request: duration(), backendRequest: duration() }, {
        rules: [cel.timeoutsRule],
      }),
      retry: obj({ codes: arr(int({ min: 400, max: 599 })), attempts: int(), backoff: duration() }),
    }, { rules: cel.httpRuleRules }),
    { min: 1, max: 16, default: [{ matches: [DEFAULT_MATCH] }], rules: [cel.totalMatchesRule] },
  ),
});

const grpcRouteSpec = obj({
  ...routeCommon(),
  rules: arr(
    obj({
      name: sectionName(),
      matches: arr(
        obj({
          method: obj({
            type: str({ enum: ["Exact", "RegularExpression"], default: "Exact" }),
            service: str({ max: 1024 }),
            method: str({ max: 1024 }),
          }, { rules: cel.grpcMethodRules }),
          headers: arr(keyValueMatch(4096), { max: 16 }),
        }),
        { max: 64 },
      ),
      filters: grpcFilters(),
      backendRefs: arr(
        backendRef({ weight: int({ min: 0, max: 1_000_000, default: 1 }), filters: grpcFilters() }),
        {
          max: 16,
        },
      ),
    }),
    { max: 16, rules: [cel.totalMatchesRule] },
  ),
});

const gatewaySpec = obj({
  gatewayClassName: str({ min: 1, max: 253 }),
  listeners: arr(
    obj({
      name: sectionName(),
      hostname: hostname(),
      port: port(),
      protocol: str({ min: 1, max: 255, pattern: PROTOCOL }),
      tls: obj({
        mode: str({ enum: ["Terminate", "Passthrough"], default: "Terminate" }),
        certificateRefs: arr(
          obj({
            group: group(""),
            kind: kind("Secret"),
            name: objectName(),
            namespace: namespace(),
          }, {
            required: ["name"],
          }),
          { max: 64 },
        ),
        options: map(str({ max: 4096 })),
        frontendValidation: any(),
      }, { rules: [cel.listenerTlsRule] }),
      allowedRoutes: obj({
        namespaces: obj({
          from: str({ enum: ["All", "Selector", "Same"], default: "Same" }),
          selector: labelSelector(),
        }, { default: { from: "Same" } }),
        kinds: arr(obj({ group: group(GATEWAY_GROUP), kind: kind() }, { required: ["kind"] }), {
          max: 8,
        }),
      }, { default: { namespaces: { from: "Same" } } }),
    }, { required: ["name", "port", "protocol"] }),
    { min: 1, max: 64, rules: cel.listenersRules },
  ),
  addresses: arr(
    obj({ type: str({ default: "IPAddress" }), value: str({ min: 1, max: 253 }) }, {
      rules: [{
        message:
          `Hostname value must be empty or contain only valid characters (matching ${HOSTNAME.source})`,
        check: (self) =>
          self.type !== "Hostname" || self.value === undefined || HOSTNAME.test(self.value),
      }],
    }),
    { max: 16, rules: cel.addressesRules },
  ),
  infrastructure: any(),
  allowedListeners: any(),
  tls: any(),
  backendTLS: any(),
}, { required: ["gatewayClassName", "listeners"] });

const gatewayClassSpec = obj({
  controllerName: str({ min: 1, max: 253, pattern: CONTROLLER_NAME }),
  description: str({ max: 64 }),
  parametersRef: any(),
}, { required: ["controllerName"] });

const referenceGrantSpec = obj({
  from: arr(
    obj({ group: group(), kind: kind(), namespace: namespace() }, {
      required: ["group", "kind", "namespace"],
    }),
    {
      min: 1,
      max: 16,
    },
  ),
  to: arr(
    obj({ group: group(), kind: kind(), name: objectName() }, { required: ["group", "kind"] }),
    {
      min: 1,
      max: 16,
    },
  ),
}, { required: ["from", "to"] });

const serviceSpec = obj({
  ports: arr(
    obj({
      name: str(),
      port: port(),
      targetPort: any(),
      protocol: str({ enum: ["TCP", "UDP", "SCTP"], default: "TCP" }),
      appProtocol: str(),
    }, { required: ["port"], open: true }),
  ),
}, { open: true });

/** What one supported kind looks like: its API versions, whether namespaced, and its schema. */
export interface KindInfo {
  apiVersions: readonly string[];
  namespaced: boolean;
  /** Schema of the top-level body (fields other than apiVersion, kind, metadata, status). */
  body: Schema;
}

const V1 = `${GATEWAY_GROUP}/v1`;

/** A Gateway API kind whose body is a required `spec`. */
const gatewayKind = (
  spec: Schema,
  namespaced = true,
  apiVersions: readonly string[] = [V1],
): KindInfo => ({
  apiVersions,
  namespaced,
  body: obj({ spec }, { required: ["spec"] }),
});

/** The kinds aether reads, by kind name. */
export const KINDS: Record<string, KindInfo> = {
  GatewayClass: gatewayKind(gatewayClassSpec, false),
  Gateway: gatewayKind(gatewaySpec),
  HTTPRoute: gatewayKind(httpRouteSpec),
  GRPCRoute: gatewayKind(grpcRouteSpec),
  ReferenceGrant: gatewayKind(referenceGrantSpec, true, [`${GATEWAY_GROUP}/v1beta1`, V1]),
  Service: {
    apiVersions: ["v1"],
    namespaced: true,
    body: obj({ spec: serviceSpec }, { open: true }),
  },
  Namespace: { apiVersions: ["v1"], namespaced: false, body: obj({ spec: any() }, { open: true }) },
  Secret: {
    apiVersions: ["v1"],
    namespaced: true,
    body: obj({
      type: str({ default: "Opaque" }),
      data: map(str()),
      stringData: map(str()),
      immutable: bool(),
    }),
  },
  EndpointSlice: {
    apiVersions: ["discovery.k8s.io/v1"],
    namespaced: true,
    body: obj({
      addressType: str({ enum: ["IPv4", "IPv6", "FQDN"] }),
      endpoints: arr(
        obj({
          addresses: arr(str(), { min: 1, max: 100 }),
          conditions: obj({ ready: bool(), serving: bool(), terminating: bool() }),
          zone: str(),
        }, { required: ["addresses"], open: true }),
        { max: 1000 },
      ),
      ports: arr(obj({ name: str(), port: int(), protocol: str(), appProtocol: str() }), {
        max: 100,
      }),
    }, { required: ["addressType"], open: true }),
  },
};
