/**
 * Test helpers for the xDS server tests: a real Envoy child process, free ports, a tiny HTTP
 * backend and builders for the few Envoy resources the tests push.
 * @module
 */
import { ensurePeer } from "../../../testbed/peers/mod.ts";
import type { NamedResource } from "../cache/mod.ts";
import { envoyBootstrap, type EnvoyBootstrapOptions } from "./bootstrap.ts";

export { freePort } from "../../../testbed/free_port.ts";

/** Polls `check` until it returns a value other than undefined/false, or fails after `ms`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
}

/** A running Envoy. */
export interface EnvoyProcess {
  adminUrl: string;
  /** Envoy's stderr so far, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

/** Starts Envoy 1.40 with an aether bootstrap; resolves once its admin port is known. */
export async function startEnvoy(
  options: Omit<EnvoyBootstrapOptions, "cluster"> & {
    cluster?: string;
    /** Rewrites the bootstrap before Envoy reads it (e.g. into an older agent's). */
    editBootstrap?: (b: Record<string, unknown>) => Record<string, unknown>;
  },
): Promise<EnvoyProcess> {
  const bin = await ensurePeer("envoy");
  const dir = await Deno.makeTempDir({ prefix: "aether-envoy-" });
  const config = `${dir}/bootstrap.json`;
  const adminPath = `${dir}/admin.txt`;
  await Deno.writeTextFile(
    config,
    JSON.stringify(
      (options.editBootstrap ?? ((b) => b))(
        envoyBootstrap({ cluster: "aether-test", adminPort: 0, ...options }),
      ),
    ),
  );
  const child = new Deno.Command(bin, {
    args: [
      "-c",
      config,
      "--admin-address-path",
      adminPath,
      "--use-dynamic-base-id",
      "--disable-hot-restart",
      "--log-level",
      "warning",
      "--concurrency",
      "1",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk);
  })();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
    await reading.catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const admin = await waitFor("envoy admin address", async () => {
      const text = await Deno.readTextFile(adminPath).catch(() => "");
      return text.trim() || undefined;
    });
    return { adminUrl: `http://${admin}`, logs: () => stderr, stop };
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
}

/** A tiny HTTP backend answering `backend <name> <path>`. */
export function startBackend(name: string): { port: number; close(): Promise<void> } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => new Response(`backend ${name} ${new URL(req.url).pathname}`),
  );
  return { port: server.addr.port, close: () => server.shutdown() };
}

const ads = { ads: {}, resource_api_version: 2 }; // V3
const hcmType =
  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

/** An HTTP listener on 127.0.0.1:port whose routes come from RDS `routeName`. */
export function listener(name: string, port: number, routeName: string): NamedResource {
  return {
    name,
    resource: {
      name,
      address: { socket_address: { address: "127.0.0.1", port_value: port } },
      filter_chains: [{
        filters: [{
          name: "envoy.filters.network.http_connection_manager",
          typed_config: {
            "@type": hcmType,
            stat_prefix: name,
            rds: { route_config_name: routeName, config_source: ads },
            http_filters: [{
              name: "envoy.filters.http.router",
              typed_config: {
                "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
              },
            }],
          },
        }],
      }],
    },
  };
}

/** A route: `prefix` answers `direct` (status 200 body) or goes to `cluster`. */
export type TestRoute = { prefix: string; direct: string } | { prefix: string; cluster: string };

/** A RouteConfiguration with one catch-all virtual host. */
export function routeConfig(name: string, routes: TestRoute[]): NamedResource {
  return {
    name,
    resource: {
      name,
      virtual_hosts: [{
        name: "all",
        domains: ["*"],
        routes: routes.map((r) => ({
          match: { prefix: r.prefix },
          ...("direct" in r
            ? { direct_response: { status: 200, body: { inline_string: r.direct } } }
            : { route: { cluster: r.cluster } }),
        })),
      }],
    },
  };
}

/**
 * An EDS cluster fed by ADS; with `serviceName`, its ClusterLoadAssignment is that one (as a
 * per-caller cluster shares its service's).
 */
export function edsCluster(name: string, serviceName?: string, connectTimeoutS = 1): NamedResource {
  return {
    name,
    resource: {
      name,
      type: 3, // EDS (encodeResource's verify() wants enum numbers)
      connect_timeout: { seconds: connectTimeoutS },
      eds_cluster_config: {
        eds_config: ads,
        ...(serviceName ? { service_name: serviceName } : {}),
      },
    },
  };
}

/** A ClusterLoadAssignment with endpoints on 127.0.0.1. */
export function endpoints(cluster: string, ports: number[]): NamedResource {
  return {
    name: cluster,
    resource: {
      cluster_name: cluster,
      endpoints: [{
        lb_endpoints: ports.map((port) => ({
          endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: port } } },
        })),
      }],
    },
  };
}

/** GET `url` and return status and body (never throws on HTTP errors). */
export async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/** Envoy's `/config_dump` as JSON. */
export async function configDump(adminUrl: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${adminUrl}/config_dump`);
  return await res.json();
}

/** The `version_info` of every dynamic resource in a config dump, by dump type. */
export function dumpVersions(dump: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const config of (dump.configs as Record<string, unknown>[]) ?? []) {
    const kind = String(config["@type"]).split(".").pop()!;
    const versions: string[] = [];
    const visit = (v: unknown, key: string) => {
      if (Array.isArray(v)) v.forEach((x) => visit(x, key));
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) visit(x, k);
      } else if (key === "version_info" && typeof v === "string") versions.push(v);
    };
    visit(config, "");
    out[kind] = versions;
  }
  return out;
}
