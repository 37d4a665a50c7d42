/**
 * The reference peer of bench/mtls_hop.ts: a plain Envoy → Envoy SPIFFE mTLS pair with none of
 * aether's configuration (static bootstraps, no xDS, no SDS, no Lua checks, no XFCC, no on-demand
 * filter): the caller's Envoy listens on `127.0.0.1:18081` in pod a's netns and dials
 * `b:15008` over mTLS with a/client's SVID (the server's URI SAN must be b's ID); the callee's
 * Envoy terminates mTLS on `b:15008` in b's netns (a client certificate of the trust domain is
 * required) and forwards to `b:<target port>`. Same Envoy binary, same pods, same load as the
 * aether modes, so a same-run comparison tells the cost of aether's configuration from the cost
 * of the hop (two Envoy passes plus TLS) on this machine.
 * @module
 */
import { ensurePeer } from "../testbed/peers/mod.ts";
import { type Proc, spawn, waitFor } from "../e2e/peers/proc.ts";

/** PEM material of one SVID. */
export interface Pem {
  cert: string;
  key: string;
}

/** What the pair needs. */
export interface ReferencePair {
  /** Pod a's netns path (the caller's egress listener binds there). */
  callerNetns: string;
  /** Pod b's IP and netns path (the callee's :15008 listener binds there). */
  calleeIp: string;
  calleeNetns: string;
  targetPort: number;
  client: Pem;
  server: Pem;
  /** The trust domain's CA bundle (PEM). */
  ca: string;
  /** The SPIFFE ID the caller requires of the callee. */
  serverId: string;
  trustDomain: string;
}

const HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3." +
  "HttpConnectionManager";
const TLS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.";

function hcm(prefix: string, cluster: string): Record<string, unknown> {
  return {
    name: "envoy.filters.network.http_connection_manager",
    typed_config: {
      "@type": HCM,
      stat_prefix: prefix,
      route_config: {
        virtual_hosts: [{
          name: "all",
          domains: ["*"],
          routes: [{ match: { prefix: "/" }, route: { cluster, timeout: "0s" } }],
        }],
      },
      http_filters: [{
        name: "envoy.filters.http.router",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
        },
      }],
    },
  };
}

function staticCluster(name: string, address: string, port: number): Record<string, unknown> {
  return {
    name,
    type: "STATIC",
    connect_timeout: "5s",
    load_assignment: {
      cluster_name: name,
      endpoints: [{
        lb_endpoints: [{
          endpoint: { address: { socket_address: { address, port_value: port } } },
        }],
      }],
    },
  };
}

function bootstrap(
  listener: Record<string, unknown>,
  cluster: Record<string, unknown>,
): Record<string, unknown> {
  return {
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: 0 } } },
    static_resources: { listeners: [listener], clusters: [cluster] },
  };
}

function certificate(p: Pem): Record<string, unknown> {
  return { certificate_chain: { inline_string: p.cert }, private_key: { inline_string: p.key } };
}

/** The two static bootstraps (plain data): the caller's and the callee's Envoy. */
export function referenceBootstraps(o: ReferencePair): {
  caller: Record<string, unknown>;
  callee: Record<string, unknown>;
} {
  const upstream = staticCluster("ref_b", o.calleeIp, 15008);
  upstream.transport_socket = {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": TLS + "UpstreamTlsContext",
      common_tls_context: {
        tls_certificates: [certificate(o.client)],
        validation_context: {
          trusted_ca: { inline_string: o.ca },
          match_typed_subject_alt_names: [{ san_type: "URI", matcher: { exact: o.serverId } }],
        },
      },
    },
  };
  const caller = bootstrap({
    name: "ref_out",
    address: {
      socket_address: {
        address: "127.0.0.1",
        port_value: 18081,
        network_namespace_filepath: o.callerNetns,
      },
    },
    filter_chains: [{ filters: [hcm("ref_out", "ref_b")] }],
  }, upstream);
  const callee = bootstrap({
    name: "ref_in",
    address: {
      socket_address: {
        address: o.calleeIp,
        port_value: 15008,
        network_namespace_filepath: o.calleeNetns,
      },
    },
    filter_chains: [{
      transport_socket: {
        name: "envoy.transport_sockets.tls",
        typed_config: {
          "@type": TLS + "DownstreamTlsContext",
          require_client_certificate: true,
          common_tls_context: {
            tls_certificates: [certificate(o.server)],
            validation_context: {
              trusted_ca: { inline_string: o.ca },
              match_typed_subject_alt_names: [{
                san_type: "URI",
                matcher: { prefix: `spiffe://${o.trustDomain}/` },
              }],
            },
          },
        },
      },
      filters: [hcm("ref_in", "ref_app")],
    }],
  }, staticCluster("ref_app", o.calleeIp, o.targetPort));
  return { caller, callee };
}

/** A running reference pair: both Envoys' pids (for schedstat) and a stop. */
export interface RunningPair {
  pids: number[];
  stop(): Promise<void>;
}

/** Starts the two Envoys; resolves once both admin addresses are written. */
export async function startReferencePair(o: ReferencePair): Promise<RunningPair> {
  const envoy = await ensurePeer("envoy");
  const dir = await Deno.makeTempDir({ prefix: "aether-bench-ref-" });
  const procs: Proc[] = [];
  const stop = async () => {
    for (const p of procs) await p.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    for (const [name, config] of Object.entries(referenceBootstraps(o))) {
      const file = `${dir}/${name}.json`, admin = `${dir}/${name}.admin`;
      await Deno.writeTextFile(file, JSON.stringify(config));
      const args = ["-c", file, "--admin-address-path", admin, "--use-dynamic-base-id"];
      args.push("--disable-hot-restart", "--log-level", "warning");
      const p = spawn(`envoy-ref-${name}`, envoy, args);
      procs.push(p);
      await waitFor(
        `reference ${name} Envoy up`,
        async () => (await Deno.readTextFile(admin).catch(() => "")).trim() ? true : undefined,
        60_000,
        [p],
      );
    }
    return { pids: procs.map((p) => p.child.pid), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
