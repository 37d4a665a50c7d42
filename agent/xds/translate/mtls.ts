/**
 * SPIFFE mTLS pieces shared by every mesh hop: SDS secret names and resources (one per identity,
 * one validation context per trust domain), the upstream socket a caller dials `pod:15008` with
 * (its own SVID; the server's URI SAN must be the endpoint's expected identity) and the
 * downstream socket of a pod's inbound listener (the pod's SVID; the client certificate must
 * chain to the trust domain's bundle and carry a URI SAN in that trust domain). Pure.
 * @module
 */
import type { IRCluster, IREndpoint } from "../../../lib/ir/mod.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, any } from "./util.ts";

const UPSTREAM_TLS = "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext";
const DOWNSTREAM_TLS = "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";

/** The port every pod's inbound mTLS listener binds (`podIP:15008`). */
export const MESH_MTLS_PORT = 15008;

/**
 * The ALPN a caller offers on a mesh mTLS connection that carries raw TCP (the capture
 * listener's TCP chains): the inbound listener hands such a connection to the pod's target port
 * as bytes, where any other goes to its HTTP connection manager.
 */
export const MESH_TCP_ALPN = "aether-tcp";

/** SubjectAltNameMatcher.SanType.URI. */
const SAN_URI = 3;

/** Endpoint metadata key (filter_metadata) that transport_socket_matches read. */
export const SOCKET_MATCH_KEY = "envoy.transport_socket_match";

/**
 * `{identity: id}` as a google.protobuf.Struct: protobufjs takes Struct in its message form, with
 * its built-in (camelCase) field names for google.protobuf.Value.
 */
function identityStruct(id: string): Record<string, unknown> {
  return { fields: { identity: { stringValue: id } } };
}

/** The socket-match metadata of an endpoint outside the mesh (IREndpoint.outsideMesh). */
function outsideStruct(): Record<string, unknown> {
  return { fields: { mesh: { stringValue: "outside" } } };
}

/** The match (and its plaintext socket) of endpoints outside the mesh. */
const OUTSIDE_MESH_MATCH = "outside-mesh";

/** The default SPIFFE ID template: `spiffe://<td>/ns/<ns>/sa/<sa>`. */
export const DEFAULT_ID_TEMPLATE = "spiffe://{td}/ns/{ns}/sa/{sa}";

/** The SPIFFE ID of a service account: `template` with `{td}`, `{ns}` and `{sa}` filled in. */
export function spiffeIdFor(
  template: string,
  trustDomain: string,
  namespace: string,
  serviceAccount: string,
): string {
  return template.replaceAll("{td}", trustDomain).replaceAll("{ns}", namespace)
    .replaceAll("{sa}", serviceAccount);
}

/** An SVID as SDS serves it. */
export interface SvidMaterial {
  spiffeId: string;
  certChainPem: string;
  keyPem: string;
}

/** A trust bundle as SDS serves it. */
export interface BundleMaterial {
  trustDomain: string;
  caPem: string;
}

/** SDS name of an identity's certificate: its SPIFFE ID. */
export function svidSecretName(spiffeId: string): string {
  return spiffeId;
}

/** SDS name of a trust domain's validation context: `spiffe://<td>`. */
export function bundleSecretName(trustDomain: string): string {
  return `spiffe://${trustDomain}`;
}

/** The Secret of one identity (certificate chain and key, inline PEM). */
export function svidSecret(s: SvidMaterial): NamedResource {
  const name = svidSecretName(s.spiffeId);
  return {
    name,
    resource: {
      name,
      tls_certificate: {
        certificate_chain: { inline_string: s.certChainPem },
        private_key: { inline_string: s.keyPem },
      },
    },
  };
}

/** The Secret of one trust domain (validation context with its CA certificates). */
export function bundleSecret(b: BundleMaterial): NamedResource {
  const name = bundleSecretName(b.trustDomain);
  return {
    name,
    resource: { name, validation_context: { trusted_ca: { inline_string: b.caPem } } },
  };
}

function sds(name: string): Record<string, unknown> {
  return { name, sds_config: adsConfigSource() };
}

/**
 * Validation against the trust domain's bundle (SDS) plus URI SAN matchers: `exact` IDs when
 * given, else any ID in the trust domain (prefix `spiffe://<td>/`).
 */
function validation(trustDomain: string, exact?: string[]): Record<string, unknown> {
  const matchers = exact
    ? exact.map((id) => ({ san_type: SAN_URI, matcher: { exact: id } }))
    : [{ san_type: SAN_URI, matcher: { prefix: `spiffe://${trustDomain}/` } }];
  return {
    combined_validation_context: {
      default_validation_context: { match_typed_subject_alt_names: matchers },
      validation_context_sds_secret_config: sds(bundleSecretName(trustDomain)),
    },
  };
}

/** The SNI a caller sends to a cluster's endpoints: `<port>.<authority>` (the inbound picks the
 * target port by it), or the cluster's own `sni` (a clusterset VIP Service's: the import's). */
export function meshSni(c: Pick<IRCluster, "name" | "port" | "sni">): string {
  return c.sni ?? `${c.port}.${c.name.split(":")[0]}`;
}

/**
 * The upstream socket: the caller's SVID, the server's URI SAN must equal `serverId` (an
 * impossible ID for the fail-closed default), SNI for the inbound's chain choice.
 */
export function upstreamMtls(
  callerId: string,
  trustDomain: string,
  serverId: string,
  sni: string,
): Record<string, unknown> {
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: any(UPSTREAM_TLS, {
      sni,
      common_tls_context: {
        tls_certificate_sds_secret_configs: [sds(svidSecretName(callerId))],
        ...validation(trustDomain, [serverId]),
      },
    }),
  };
}

/** The ID no certificate carries: the fail-closed default socket expects it. */
export function noIdentity(trustDomain: string): string {
  return `spiffe://${trustDomain}/-/endpoint-without-identity`;
}

/**
 * transport_socket_matches and default socket of a cluster dialled by `callerId`: one match per
 * endpoint identity; endpoints of pods outside the mesh get plaintext (their own match); other
 * endpoints without an identity get plaintext only when the Service opted in, otherwise a socket
 * no server can satisfy (the request fails; never a silent downgrade).
 */
export function clusterMtls(
  c: IRCluster,
  callerId: string,
  trustDomain: string,
): Record<string, unknown> {
  const sni = meshSni(c);
  const out: Record<string, unknown> = {
    transport_socket_matches: (c.identities ?? []).map((id) => ({
      name: id,
      match: identityStruct(id),
      transport_socket: upstreamMtls(callerId, trustDomain, id, sni),
    })),
  };
  if (c.outsideMeshEndpoints) {
    (out.transport_socket_matches as unknown[]).push({
      name: OUTSIDE_MESH_MATCH,
      match: outsideStruct(),
      transport_socket: {
        name: "envoy.transport_sockets.raw_buffer",
        typed_config: any("envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer"),
      },
    });
  }
  if (!c.plaintextAllowed) {
    out.transport_socket = upstreamMtls(callerId, trustDomain, noIdentity(trustDomain), sni);
  }
  return out;
}

/**
 * Endpoint address and metadata: identity endpoints are dialled at :15008 and tagged; an
 * endpoint with `dialAt` (an east-west gateway) is dialled there, tagged by its identity alike.
 */
export function endpointSocket(
  e: IREndpoint,
): { address: string; port: number; metadata?: Record<string, unknown> } {
  if (e.outsideMesh) {
    return {
      address: e.address,
      port: e.port,
      metadata: { filter_metadata: { [SOCKET_MATCH_KEY]: outsideStruct() } },
    };
  }
  const at = e.dialAt ?? { address: e.address, port: e.identity ? MESH_MTLS_PORT : e.port };
  if (!e.identity) return at;
  return {
    ...at,
    metadata: { filter_metadata: { [SOCKET_MATCH_KEY]: identityStruct(e.identity) } },
  };
}

/**
 * The inbound listener's downstream socket: the pod's SVID; a client certificate is required
 * and must chain to the trust domain's bundle with a URI SAN in the trust domain. `alpn`: the
 * protocols it negotiates (HTTP by default; {@link MESH_TCP_ALPN} on a raw-TCP chain).
 */
export function downstreamMtls(
  podId: string,
  trustDomain: string,
  alpn: readonly string[] = ["h2", "http/1.1"],
): Record<string, unknown> {
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: any(DOWNSTREAM_TLS, {
      require_client_certificate: { value: true },
      common_tls_context: {
        tls_certificate_sds_secret_configs: [sds(svidSecretName(podId))],
        ...validation(trustDomain),
        alpn_protocols: [...alpn],
      },
    }),
  };
}
