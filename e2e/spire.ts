/**
 * A real SPIRE server + agent for identity tests, in a temp dir: join-token node attestation,
 * the unix workload attestor (every process of this uid is "the aether agent"), the agent's admin
 * socket with the Delegated Identity API and the aether agent as its one authorized delegate.
 * Workload entries for pods are registered by their k8s selectors (`k8s:ns:<ns>`,
 * `k8s:sa:<sa>`), which the delegate passes to SubscribeToX509SVIDs; no k8s attestor is needed.
 * The server keeps its CA keys on disk (as the chart's does), so a restarted server signs with the
 * CA its agents already trust.
 * @module
 */
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { exec, freePort, type Proc, spawn, waitFor } from "./peers/proc.ts";
import { selfSigned, signLeaf } from "./tls.ts";

/** Options of {@link startSpire}. */
export interface SpireOptions {
  trustDomain?: string;
  /** Default X.509-SVID TTL, e.g. "1h" or "120s" (rotation at half-life). */
  svidTtl?: string;
  /**
   * Root the trust domain in a CA made here (SPIRE's `disk` UpstreamAuthority), so a test can
   * mint certificates SPIRE would never issue (see {@link Spire.mint}).
   */
  upstreamCa?: boolean;
}

/** A running SPIRE pair. */
export interface Spire {
  trustDomain: string;
  dir: string;
  /** Workload API socket (`--spire-socket`). */
  socket: string;
  /** Admin socket with the Delegated Identity API (`--spire-admin-socket`). */
  adminSocket: string;
  /** The server's private API socket (`socket_path`: Entry API and the CLI, no authentication). */
  serverSocket: string;
  /** The spire-server binary (for its CLI: `entry show -socketPath <serverSocket>` …). */
  serverBin: string;
  /** SPIFFE ID of the aether agent (the authorized delegate; also its Workload API SVID). */
  agentId: string;
  procs: Proc[];
  /** Registers `spiffe://<td>/ns/<ns>/sa/<sa>` for selectors k8s:ns + k8s:sa; returns the ID. */
  registerPod(ns: string, sa: string, ttlSeconds?: number): Promise<string>;
  /** Registers an entry with any ID and selectors (`type:value` strings). */
  register(spiffeId: string, selectors: string[], ttlSeconds?: number): Promise<void>;
  /** Stops the SPIRE agent (the server keeps running). */
  stopAgent(): Promise<void>;
  /** Starts the SPIRE agent again (same data dir, so it keeps its node identity). */
  startAgent(): Promise<void>;
  /** Stops the SPIRE server (the agent keeps running on its cached SVIDs). */
  stopServer(): Promise<void>;
  /** Starts the SPIRE server again (same datastore) and waits until it is healthy. */
  startServer(): Promise<void>;
  /**
   * With `upstreamCa`: a leaf certificate signed by the trust domain's root with these URI SANs;
   * returns its PEM file paths.
   */
  mint(name: string, uris: string[]): Promise<{ cert: string; key: string }>;
  /** Stops both and removes the dir. */
  stop(): Promise<void>;
}

/** The trust domain's upstream CA files in the SPIRE dir. */
const UPSTREAM_CA = { key: "ca.key", cert: "ca.pem" };

/** A CA for the trust domain (basic constraints CA, URI SAN of the trust domain). */
async function makeCa(dir: string, td: string): Promise<void> {
  await selfSigned(dir, UPSTREAM_CA, {
    cn: "aether test upstream CA",
    extensions: [
      "basicConstraints=critical,CA:TRUE",
      "keyUsage=critical,keyCertSign,cRLSign",
      `subjectAltName=URI:spiffe://${td}`,
    ],
  });
}

function serverConf(dir: string, port: number, td: string, ttl: string, ca: boolean): string {
  const upstream = ca
    ? `  UpstreamAuthority "disk" {
    plugin_data {
      cert_file_path = "${join(dir, UPSTREAM_CA.cert)}"
      key_file_path = "${join(dir, UPSTREAM_CA.key)}"
    }
  }
`
    : "";
  return `server {
  bind_address = "127.0.0.1"
  bind_port = "${port}"
  socket_path = "${join(dir, "server.sock")}"
  trust_domain = "${td}"
  data_dir = "${join(dir, "server-data")}"
  log_level = "INFO"
  default_x509_svid_ttl = "${ttl}"
  # The SPIRE agent's own SVID keeps an hour whatever the workloads' TTL: a short one would expire
  # while a test has the server stopped, and the agent would exit.
  agent_ttl = "1h"
}
plugins {
  DataStore "sql" {
    plugin_data {
      database_type = "sqlite3"
      connection_string = "${join(dir, "server-data", "datastore.sqlite3")}"
    }
  }
  NodeAttestor "join_token" {
    plugin_data {}
  }
  KeyManager "disk" {
    plugin_data {
      keys_path = "${join(dir, "server-data", "keys.json")}"
    }
  }
${upstream}}
`;
}

function agentConf(dir: string, port: number, td: string, delegate: string): string {
  return `agent {
  data_dir = "${join(dir, "agent-data")}"
  log_level = "INFO"
  server_address = "127.0.0.1"
  server_port = "${port}"
  socket_path = "${join(dir, "public", "api.sock")}"
  admin_socket_path = "${join(dir, "admin", "admin.sock")}"
  authorized_delegates = ["${delegate}"]
  trust_domain = "${td}"
  insecure_bootstrap = true
}
plugins {
  NodeAttestor "join_token" {
    plugin_data {}
  }
  KeyManager "disk" {
    plugin_data {
      directory = "${join(dir, "agent-data")}"
    }
  }
  WorkloadAttestor "unix" {
    plugin_data {}
  }
}
`;
}

/** Starts SPIRE and waits until the aether agent's own SVID is served. */
export async function startSpire(opts: SpireOptions = {}): Promise<Spire> {
  const [server, agent] = await Promise.all([
    ensurePeer("spire-server"),
    ensurePeer("spire-agent"),
  ]);
  const td = opts.trustDomain ?? "aether.test";
  const dir = await Deno.makeTempDir({ prefix: "aether-spire-" });
  await Deno.mkdir(join(dir, "public"));
  await Deno.mkdir(join(dir, "admin"));
  const procs: Proc[] = [];
  const port = freePort();
  const agentId = `spiffe://${td}/ns/aether-system/sa/aether-agent`;
  if (opts.upstreamCa) await makeCa(dir, td);
  await Deno.writeTextFile(
    join(dir, "server.conf"),
    serverConf(dir, port, td, opts.svidTtl ?? "1h", opts.upstreamCa ?? false),
  );
  await Deno.writeTextFile(join(dir, "agent.conf"), agentConf(dir, port, td, agentId));
  const sock = ["-socketPath", join(dir, "server.sock")];
  const nodeId = `spiffe://${td}/node/test`;
  let agentProc: Proc | undefined;
  const stopAgent = async () => {
    if (!agentProc) return;
    await agentProc.stop();
    procs.splice(procs.indexOf(agentProc), 1);
    agentProc = undefined;
  };
  let token = "";
  const startAgent = async () => {
    const args = ["run", "-config", join(dir, "agent.conf")];
    agentProc = spawn("spire-agent", agent, token ? [...args, "-joinToken", token] : args);
    procs.push(agentProc);
    await waitFor(
      "spire-agent healthy",
      async () => {
        const r = await exec(agent, [
          "healthcheck",
          "-socketPath",
          join(dir, "public", "api.sock"),
        ]);
        return r.code === 0 ? true : undefined;
      },
      120_000,
      procs,
    );
  };
  const register = async (spiffeId: string, selectors: string[], ttlSeconds?: number) => {
    const r = await exec(server, [
      "entry",
      "create",
      ...sock,
      "-parentID",
      nodeId,
      "-spiffeID",
      spiffeId,
      ...selectors.flatMap((s) => ["-selector", s]),
      ...(ttlSeconds ? ["-x509SVIDTTL", String(ttlSeconds)] : []),
    ]);
    if (r.code !== 0) throw new Error(`spire-server entry create: ${r.stderr}${r.stdout}`);
  };
  const stop = async () => {
    for (const p of [...procs].reverse()) await p.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  let serverProc: Proc | undefined;
  const stopServer = async () => {
    if (!serverProc) return;
    await serverProc.stop();
    procs.splice(procs.indexOf(serverProc), 1);
    serverProc = undefined;
  };
  const startServer = async () => {
    serverProc = spawn("spire-server", server, ["run", "-config", join(dir, "server.conf")]);
    procs.unshift(serverProc);
    await waitFor(
      "spire-server healthy",
      async () => {
        const r = await exec(server, ["healthcheck", ...sock]);
        return r.code === 0 ? true : undefined;
      },
      120_000,
      procs,
    );
  };
  try {
    await startServer();
    const tok = await exec(server, ["token", "generate", ...sock, "-spiffeID", nodeId]);
    token = tok.stdout.match(/Token:\s*(\S+)/)?.[1] ?? "";
    if (!token) throw new Error(`no join token: ${tok.stdout}${tok.stderr}`);
    await register(agentId, [`unix:uid:${Deno.uid()}`]);
    await startAgent();
    token = ""; // attested: later starts reuse the agent's stored SVID
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    trustDomain: td,
    dir,
    socket: join(dir, "public", "api.sock"),
    adminSocket: join(dir, "admin", "admin.sock"),
    serverSocket: join(dir, "server.sock"),
    serverBin: server,
    agentId,
    procs,
    register,
    registerPod: async (ns, sa, ttl) => {
      const id = `spiffe://${td}/ns/${ns}/sa/${sa}`;
      await register(id, [`k8s:ns:${ns}`, `k8s:sa:${sa}`], ttl);
      return id;
    },
    stopAgent,
    startAgent,
    stopServer,
    startServer,
    mint: async (name, uris) => {
      if (!opts.upstreamCa) throw new Error("mint needs startSpire({ upstreamCa: true })");
      const files = { key: `${name}.key`, cert: `${name}.pem` };
      await signLeaf(dir, files, {
        cn: name,
        ca: UPSTREAM_CA,
        days: 1,
        extensions: [
          "basicConstraints=critical,CA:FALSE",
          "keyUsage=critical,digitalSignature",
          "extendedKeyUsage=serverAuth,clientAuth",
          `subjectAltName=${uris.map((u) => `URI:${u}`).join(",")}`,
        ],
      });
      return { cert: join(dir, files.cert), key: join(dir, files.key) };
    },
    stop,
  };
}
