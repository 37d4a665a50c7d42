/**
 * SPIRE smoke test: a real spire-server and spire-agent (join-token attestation, unix workload
 * attestor) in a temp dir; a workload (`spire-agent api fetch x509`) receives an X.509-SVID with the
 * registered SPIFFE ID over the Workload API.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { ensurePeer } from "../../lib/peers/mod.ts";
import { dumpOutput, exec, freePort, type Proc, spawn, stopAll, waitFor } from "./proc.ts";

const trustDomain = "aether.test";

function serverConf(dir: string, port: number): string {
  return `server {
  bind_address = "127.0.0.1"
  bind_port = "${port}"
  socket_path = "${join(dir, "server.sock")}"
  trust_domain = "${trustDomain}"
  data_dir = "${join(dir, "server-data")}"
  log_level = "DEBUG"
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
  KeyManager "memory" {
    plugin_data {}
  }
}
`;
}

function agentConf(dir: string, port: number): string {
  return `agent {
  data_dir = "${join(dir, "agent-data")}"
  log_level = "DEBUG"
  server_address = "127.0.0.1"
  server_port = "${port}"
  socket_path = "${join(dir, "agent.sock")}"
  trust_domain = "${trustDomain}"
  insecure_bootstrap = true
}
plugins {
  NodeAttestor "join_token" {
    plugin_data {}
  }
  KeyManager "memory" {
    plugin_data {}
  }
  WorkloadAttestor "unix" {
    plugin_data {}
  }
}
`;
}

Deno.test("SPIRE: a workload receives its X.509-SVID over the Workload API", async () => {
  const server = await ensurePeer("spire-server");
  const agent = await ensurePeer("spire-agent");
  const dir = await Deno.makeTempDir({ prefix: "aether-spire-" });
  const procs: Proc[] = [];
  try {
    const port = freePort();
    await Deno.writeTextFile(join(dir, "server.conf"), serverConf(dir, port));
    await Deno.writeTextFile(join(dir, "agent.conf"), agentConf(dir, port));
    const sock = ["-socketPath", join(dir, "server.sock")];

    procs.push(spawn("spire-server", server, ["run", "-config", join(dir, "server.conf")]));
    await waitFor(
      "spire-server healthy",
      async () => {
        const r = await exec(server, ["healthcheck", ...sock]);
        return r.code === 0 ? true : undefined;
      },
      60_000,
      procs,
    );

    const nodeId = `spiffe://${trustDomain}/node/test`;
    const workloadId = `spiffe://${trustDomain}/workload/uid-${Deno.uid()}`;
    const tok = await exec(server, ["token", "generate", ...sock, "-spiffeID", nodeId]);
    assert.equal(tok.code, 0, tok.stderr);
    const token = tok.stdout.match(/Token:\s*(\S+)/)?.[1];
    assert.ok(token, `no token in: ${tok.stdout}`);
    const entry = await exec(server, [
      "entry",
      "create",
      ...sock,
      "-parentID",
      nodeId,
      "-spiffeID",
      workloadId,
      "-selector",
      `unix:uid:${Deno.uid()}`,
    ]);
    assert.equal(entry.code, 0, entry.stderr + entry.stdout);

    procs.push(
      spawn("spire-agent", agent, ["run", "-config", join(dir, "agent.conf"), "-joinToken", token]),
    );
    const svidDir = join(dir, "svid");
    await Deno.mkdir(svidDir);
    // The workload: a separate process of this uid asking the agent's Workload API socket.
    const fetched = await waitFor(
      "an X.509-SVID from the Workload API",
      async () => {
        const r = await exec(agent, [
          "api",
          "fetch",
          "x509",
          "-socketPath",
          join(dir, "agent.sock"),
          "-write",
          svidDir,
        ]);
        return r.code === 0 ? r.stdout : undefined;
      },
      60_000,
      procs,
    );
    assert.match(fetched, new RegExp(`SPIFFE ID:\\s+${workloadId}`), dumpOutput(procs));

    const pem = await Deno.readTextFile(join(svidDir, "svid.0.pem"));
    const cert = new X509Certificate(pem);
    assert.equal(cert.subjectAltName, `URI:${workloadId}`);
    const bundle = new X509Certificate(await Deno.readTextFile(join(svidDir, "bundle.0.pem")));
    assert.ok(bundle.ca, "bundle holds the trust domain's CA");
    assert.ok(cert.verify(bundle.publicKey), "the SVID is signed by the trust domain's CA");
  } finally {
    await stopAll(procs);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
