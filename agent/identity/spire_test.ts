/**
 * The identity clients against a real SPIRE server + agent: the agent's own SVID over the
 * Workload API; a pod identity's SVID and the bundles over the Delegated Identity API (admin
 * socket, authorized delegate); the last SVID kept while the SPIRE agent is stopped, and the
 * streams back once it returns.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { startSpire } from "../../e2e/spire.ts";
import { waitFor } from "../../e2e/peers/proc.ts";
import { NodeIdentities } from "./node_identities.ts";
import { startEdgeIdentity } from "./edge_identity.ts";
import { WorkloadApiClient, type WorkloadUpdate } from "./workload.ts";
import { parseSpiffeId } from "./svid.ts";

const quiet = () => new Logger("test", () => {});

function verifies(chainPem: string, caPem: string): boolean {
  const leaf = new X509Certificate(chainPem);
  return new X509Certificate(caPem).publicKey && leaf.verify(new X509Certificate(caPem).publicKey);
}

Deno.test("identity: Workload API and Delegated Identity API against real SPIRE", async () => {
  const spire = await startSpire();
  const metrics = new Registry();
  let changes = 0;
  let skewMs = 0;
  let own: WorkloadUpdate | undefined;
  const workload = new WorkloadApiClient({
    socket: spire.socket,
    logger: quiet(),
    onUpdate: (u) => own = u,
  });
  const node = new NodeIdentities({
    adminSocket: spire.adminSocket,
    logger: quiet(),
    metrics,
    onChange: () => changes++,
    countdownMs: 200,
    now: () => Date.now() + skewMs,
  });
  try {
    // The agent's own identity (the edge's client certificate).
    const mine = await waitFor("own SVID", () => Promise.resolve(own), 60_000, spire.procs);
    assert.equal(mine.svids[0].spiffeId, spire.agentId);
    assert.equal(mine.bundles[0].trustDomain, spire.trustDomain);
    assert.ok(verifies(mine.svids[0].certChainPem, mine.bundles[0].caPem));
    assert.equal(
      new X509Certificate(mine.svids[0].certChainPem).subjectAltName,
      `URI:${spire.agentId}`,
    );

    // A pod identity by selectors, one subscription for it.
    const id = await spire.registerPod("a", "client");
    node.setWanted([{
      spiffeId: id,
      selectors: [{ type: "k8s", value: "ns:a" }, { type: "k8s", value: "sa:client" }],
    }]);
    const svid = await waitFor(
      "pod SVID",
      () => Promise.resolve(node.svid(id)),
      60_000,
      spire.procs,
    );
    assert.equal(parseSpiffeId(svid.spiffeId).path, "/ns/a/sa/client");
    await waitFor("bundles", () => Promise.resolve(node.bundles()[0]), 60_000, spire.procs);
    const bundle = node.bundles().find((b) => b.trustDomain === spire.trustDomain);
    assert.ok(bundle, "the trust domain's bundle");
    assert.ok(verifies(svid.certChainPem, bundle.caPem), "the pod SVID chains to the bundle");
    assert.ok(svid.keyPem.includes("BEGIN PRIVATE KEY"));
    assert.ok(svid.expiresAt > Date.now());
    assert.ok(changes >= 2, "SVID and bundle changes were reported");
    assert.ok(metrics.render().includes(`aether_identity_svid_expiry_seconds{spiffe_id="${id}"}`));

    // An identity whose entry does not exist (yet) gives nothing, and never another identity.
    const other = `spiffe://${spire.trustDomain}/ns/a/sa/nobody`;
    node.setWanted([
      {
        spiffeId: id,
        selectors: [{ type: "k8s", value: "ns:a" }, { type: "k8s", value: "sa:client" }],
      },
      {
        spiffeId: other,
        selectors: [{ type: "k8s", value: "ns:a" }, { type: "k8s", value: "sa:nobody" }],
      },
    ]);

    // SPIRE away: the last SVID stays in use and the streams say they are down.
    await spire.stopAgent();
    await waitFor("streams down", () => Promise.resolve(node.connected ? undefined : true), 60_000);
    assert.equal(node.svid(id)?.certChainPem, svid.certChainPem, "last SVID kept");
    await waitFor(
      "workload API down",
      () => Promise.resolve(workload.connected ? undefined : true),
      60_000,
    );

    // A new identity registered while SPIRE is away is delivered once it is back.
    const late = await spire.registerPod("a", "nobody");
    assert.equal(late, other);
    await spire.startAgent();
    await waitFor(
      "streams up",
      () => Promise.resolve(node.connected ? true : undefined),
      60_000,
      spire.procs,
    );
    const got = await waitFor(
      "late SVID",
      () => Promise.resolve(node.svid(other)),
      90_000,
      spire.procs,
    );
    assert.equal(got.spiffeId, other);
    assert.ok(node.svid(id), "the first identity is still held");
    await waitFor(
      "workload API back",
      () => Promise.resolve(workload.connected || undefined),
      60_000,
    );

    // An SVID past its expiry (clock moved 2 h on) is dropped, not served.
    const before = changes;
    skewMs = 2 * 3600_000;
    await waitFor(
      "expired SVIDs dropped",
      () => Promise.resolve(node.svids().length === 0 || undefined),
    );
    assert.ok(changes > before, "the drop was reported");
    assert.ok(
      metrics.render().includes(`aether_identity_svid_expiry_seconds{spiffe_id="${id}"} 0`),
    );
    skewMs = 0;

    // Dropping an identity closes its subscription and forgets its SVID.
    node.setWanted([]);
    assert.equal(node.svid(id), undefined);
    assert.deepEqual(node.svids(), []);
  } finally {
    workload.close();
    node.close();
    await spire.stop();
  }
});

Deno.test("identity: SPIRE server away — renewal overdue said (gauge, one warning), then renewed", async () => {
  // 30 s SVIDs by default (the edge's own too): SPIRE renews them at 15 s, overdue from 20 s.
  const spire = await startSpire({ svidTtl: "30s" });
  const metrics = new Registry();
  const edgeMetrics = new Registry();
  const logs: string[] = [];
  const node = new NodeIdentities({
    adminSocket: spire.adminSocket,
    logger: new Logger("test", (l) => logs.push(l)),
    metrics,
    onChange: () => {},
    countdownMs: 200,
  });
  const edge = await startEdgeIdentity({
    socket: spire.socket,
    trustDomain: spire.trustDomain,
    logger: quiet(),
    metrics: edgeMetrics,
    countdownMs: 200,
  });
  const gauge = (id: string, m = metrics) =>
    m.render().match(
      new RegExp(`aether_identity_svid_renewal_overdue\\{spiffe_id="${id}"\\} (\\d)`),
    )?.[1];
  try {
    // A 30 s SVID: SPIRE renews it at 15 s, overdue from 20 s.
    const id = await spire.registerPod("a", "short", 30);
    node.setWanted([{
      spiffeId: id,
      selectors: [{ type: "k8s", value: "ns:a" }, { type: "k8s", value: "sa:short" }],
    }]);
    const first = await waitFor("SVID", () => Promise.resolve(node.svid(id)), 60_000, spire.procs);
    assert.equal(gauge(id), "0", "a fresh SVID is not overdue");

    await spire.stopServer();
    await waitFor("overdue", () => Promise.resolve(gauge(id) === "1" || undefined), 40_000);
    await waitFor(
      "the edge's own SVID overdue too",
      () => Promise.resolve(gauge(edge.callerId, edgeMetrics) === "1" || undefined),
      40_000,
    );
    const held = node.svid(id);
    assert.ok(held && held.expiresAt > Date.now(), "the SVID still serves until its expiry");
    assert.ok(
      node.connected,
      "the SPIRE agent's streams stay up: only renewal says the server is away",
    );
    const warned = () => logs.filter((l) => l.includes("SVID not renewed")).length;
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(warned(), 1, "one warning per SVID, not one per tick");
    assert.ok(logs.find((l) => l.includes("SVID not renewed"))!.includes(id));

    await spire.startServer();
    const renewed = await waitFor(
      "renewed SVID",
      () => {
        const now = node.svid(id);
        return Promise.resolve(now && now.certChainPem !== first.certChainPem ? now : undefined);
      },
      60_000,
      spire.procs,
    );
    assert.ok(renewed.expiresAt > first.expiresAt);
    assert.equal(gauge(id), "0", "renewal clears the gauge");
    await waitFor(
      "the edge's renewed",
      () => Promise.resolve(gauge(edge.callerId, edgeMetrics) === "0" || undefined),
      60_000,
    );
  } finally {
    edge.close();
    node.close();
    await spire.stop();
  }
});
