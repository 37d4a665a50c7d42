/**
 * The Envoy enum values translate emits, by proto enum and value name. Resources carry the
 * numbers (protobufjs `verify`, run by `encodeResource` before `fromObject`, accepts only numbers);
 * `enums_test.ts` checks every entry against the loaded Envoy protos.
 * @module
 */

/** Full proto enum name → value name → number. */
export const enums = {
  "envoy.config.core.v3.ApiVersion": { V3: 2 },
  "envoy.config.core.v3.HeaderValueOption.HeaderAppendAction": {
    APPEND_IF_EXISTS_OR_ADD: 0,
    OVERWRITE_IF_EXISTS_OR_ADD: 2,
  },
  "envoy.config.core.v3.SocketAddress.Protocol": { TCP: 0, UDP: 1 },
  "envoy.config.cluster.v3.Cluster.DiscoveryType": { STATIC: 0, EDS: 3, ORIGINAL_DST: 4 },
  "envoy.config.cluster.v3.Cluster.LbPolicy": { ROUND_ROBIN: 0, CLUSTER_PROVIDED: 6 },
  "envoy.config.route.v3.RouteAction.ClusterNotFoundResponseCode": { INTERNAL_SERVER_ERROR: 2 },
  "envoy.config.route.v3.RedirectAction.RedirectResponseCode": {
    MOVED_PERMANENTLY: 0,
    FOUND: 1,
    SEE_OTHER: 2,
    TEMPORARY_REDIRECT: 3,
    PERMANENT_REDIRECT: 4,
  },
  "envoy.config.core.v3.HttpProtocolOptions.HeadersWithUnderscoresAction": {
    ALLOW: 0,
    REJECT_REQUEST: 1,
    DROP_HEADER: 2,
  },
  "envoy.type.v3.FractionalPercent.DenominatorType": { HUNDRED: 0, MILLION: 2 },
  "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.CodecType": {
    AUTO: 0,
  },
  "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.ForwardClientCertDetails":
    { SANITIZE: 0, SANITIZE_SET: 3 },
  "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.PathWithEscapedSlashesAction":
    { UNESCAPE_AND_REDIRECT: 3 },
} as const;

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

/** ApiVersion.V3. */
export const API_V3 = enums["envoy.config.core.v3.ApiVersion"].V3;
/** HeaderValueOption.HeaderAppendAction values. */
export const AppendAction = enums["envoy.config.core.v3.HeaderValueOption.HeaderAppendAction"];
/** SocketAddress.Protocol values. */
export const SocketProtocol = enums["envoy.config.core.v3.SocketAddress.Protocol"];
/** Cluster.DiscoveryType values. */
export const DiscoveryType = enums["envoy.config.cluster.v3.Cluster.DiscoveryType"];
/** Cluster.LbPolicy values. */
export const LbPolicy = enums["envoy.config.cluster.v3.Cluster.LbPolicy"];
/** RouteAction.ClusterNotFoundResponseCode values. */
export const ClusterNotFound =
  enums["envoy.config.route.v3.RouteAction.ClusterNotFoundResponseCode"];
/** RedirectAction.RedirectResponseCode values. */
export const RedirectCode = enums["envoy.config.route.v3.RedirectAction.RedirectResponseCode"];
/** HttpProtocolOptions.HeadersWithUnderscoresAction values. */
export const HeadersWithUnderscores =
  enums["envoy.config.core.v3.HttpProtocolOptions.HeadersWithUnderscoresAction"];
/** FractionalPercent.DenominatorType values. */
export const Denominator = enums["envoy.type.v3.FractionalPercent.DenominatorType"];
/** HttpConnectionManager.CodecType values. */
export const CodecType = enums[`${HCM}.CodecType`];
/** HttpConnectionManager.ForwardClientCertDetails values. */
export const ForwardClientCert = enums[`${HCM}.ForwardClientCertDetails`];
/** HttpConnectionManager.PathWithEscapedSlashesAction values. */
export const EscapedSlashes = enums[`${HCM}.PathWithEscapedSlashesAction`];
