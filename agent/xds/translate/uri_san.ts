/**
 * "An X.509-SVID has exactly one URI SAN", enforced on both sides of a mesh hop. Envoy's
 * validators (the default one and the SPIFFE one) accept a peer certificate with several URI
 * SANs as long as one matches, so aether checks the count itself. Pure.
 *
 * - Inbound (a pod's `:15008` listener): a Lua HTTP filter answers 403 unless the caller's
 *   certificate has exactly one URI SAN.
 * - Outbound (every mTLS cluster, node proxy and edge): upstream HTTP filters on the cluster. A
 *   header mutation writes the server certificate's URI SANs (`%UPSTREAM_PEER_URI_SAN%`, joined by
 *   commas) into an internal response header, and a Lua filter before it (upstream filters run in
 *   reverse order on the response) removes the header and, when it lists more than one SAN,
 *   replaces the response with a 502 whose body says why. Envoy offers no handshake-time hook
 *   for this, so the request has reached the server (which proved the trust domain's CA and the
 *   expected ID); its answer never reaches the caller. A plaintext endpoint (opted in) has no
 *   peer certificate: no header, passed through.
 * @module
 */
import { AppendAction } from "./enums.ts";
import { any } from "./util.ts";

const LUA = "envoy.extensions.filters.http.lua.v3.Lua";
const HEADER_MUTATION = "envoy.extensions.filters.http.header_mutation.v3.HeaderMutation";
const UPSTREAM_CODEC = "envoy.extensions.filters.http.upstream_codec.v3.UpstreamCodec";

/** Internal response header carrying the upstream certificate's URI SANs (never leaves Envoy). */
export const UPSTREAM_URI_SAN_HEADER = "x-aether-upstream-uri-san";

const INBOUND_ONE_URI_SAN = `function envoy_on_request(h)
  local ssl = h:streamInfo():downstreamSslConnection()
  if ssl == nil or #ssl:uriSanPeerCertificate() ~= 1 then
    h:respond({[":status"] = "403"}, "a SPIFFE certificate has exactly one URI SAN")
  end
end
`;

const OUTBOUND_ONE_URI_SAN = `function envoy_on_response(h)
  local sans = h:headers():get("${UPSTREAM_URI_SAN_HEADER}")
  h:headers():remove("${UPSTREAM_URI_SAN_HEADER}")
  if sans ~= nil and string.find(sans, ",", 1, true) then
    h:logWarn("refused a server certificate with more than one URI SAN: " .. sans)
    h:headers():replace(":status", "502")
    h:headers():remove("content-length")
    h:headers():replace("content-type", "text/plain")
    h:body(true):setBytes("upstream certificate has more than one URI SAN (a SPIFFE certificate has exactly one)\\n")
  end
end
`;

function lua(source: string): Record<string, unknown> {
  return {
    name: "envoy.filters.http.lua",
    typed_config: any(LUA, { default_source_code: { inline_string: source } }),
  };
}

/** The inbound HTTP filter that refuses (403) a caller whose certificate lacks exactly one URI SAN. */
export function oneUriSanFilter(): Record<string, unknown> {
  return lua(INBOUND_ONE_URI_SAN);
}

/**
 * The upstream HTTP filters of an mTLS cluster (`HttpProtocolOptions.http_filters`): refuse
 * (502) a server certificate with more than one URI SAN, then the upstream codec (last, as Envoy
 * requires).
 */
export function upstreamOneUriSanFilters(): Record<string, unknown>[] {
  return [
    lua(OUTBOUND_ONE_URI_SAN),
    {
      name: "envoy.filters.http.header_mutation",
      typed_config: any(HEADER_MUTATION, {
        mutations: {
          response_mutations: [{
            append: {
              header: { key: UPSTREAM_URI_SAN_HEADER, value: "%UPSTREAM_PEER_URI_SAN%" },
              append_action: AppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
            },
          }],
        },
      }),
    },
    { name: "envoy.filters.http.upstream_codec", typed_config: any(UPSTREAM_CODEC) },
  ];
}
