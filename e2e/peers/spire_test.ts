/**
 * SPIRE smoke test: a real spire-server and spire-agent (join-token attestation, unix workload
 * attestor) from `startSpire` (e2e/spire.ts); a workload of this uid (`spire-agent api fetch
 * x509`) receives the X.509-SVID registered for its uid over the Workload API.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { startSpire } from "../spire.ts";
import { dumpOutput, exec, waitFor } from "./proc.ts";

Deno.test("SPIRE: a workload receives its X.509-SVID over the Workload API", async () => {
  const agent = await ensurePeer("spire-agent");
  const spire = await startSpire();
  try {
    // startSpire registers every process of this uid (unix:uid) as the aether agent's identity.
    const workloadId = spire.agentId;
    const svidDir = join(spire.dir, "svid");
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
          spire.socket,
          "-write",
          svidDir,
        ]);
        return r.code === 0 ? r.stdout : undefined;
      },
      60_000,
      spire.procs,
    );
    assert.match(fetched, new RegExp(`SPIFFE ID:\\s+${workloadId}`), dumpOutput(spire.procs));

    const pem = await Deno.readTextFile(join(svidDir, "svid.0.pem"));
    const cert = new X509Certificate(pem);
    assert.equal(cert.subjectAltName, `URI:${workloadId}`);
    const bundle = new X509Certificate(await Deno.readTextFile(join(svidDir, "bundle.0.pem")));
    assert.ok(bundle.ca, "bundle holds the trust domain's CA");
    assert.ok(cert.verify(bundle.publicKey), "the SVID is signed by the trust domain's CA");
  } finally {
    await spire.stop();
  }
});
