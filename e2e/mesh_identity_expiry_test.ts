/**
 * An SVID that expires while SPIRE is away is dropped, not served (docs/identity.md "Fix first"):
 * two nodes; SVIDs of 30 s for the callees b/b (node-2) and e/e (node-1, the callers' node) and
 * the caller c/caller (node-1), of an hour for a/client (node-1) and d/d (node-2). With the
 * SPIRE agent stopped, once those SVIDs expire a → b, a → e and c → d fail though node-1 pools
 * connections for them, those connections close, and no Envoy holds the expired certificates;
 * a → d (both SVIDs valid) still answers. When SPIRE is back all are served again.
 */
import assert from "node:assert/strict";
import type { NodeAgent } from "../agent/node/mod.ts";
import { waitFor } from "./peers/proc.ts";
import { podService, type RigPod, secretPem, startIdentityRig } from "./identity_harness.ts";
import {
  answers,
  certificateGone,
  connectionsClosed,
  expiryOf,
  failsAfter,
  statusFrom,
  upstreamActive,
} from "./identity_probes.ts";

const TTL = 30;
/** How long after an SVID's expiry its use must have stopped (a loaded 2-core machine). */
const BOUND_S = 10;

/** A rig pod `<sa>-0` in namespace `ns`; with `ttl` its SVID lives that long, else an hour. */
function pod(ns: string, sa: string, o: { node?: string; echo?: boolean; ttl?: number } = {}) {
  const p: RigPod = { key: ns, namespace: ns, name: `${sa}-0`, serviceAccount: sa };
  if (o.echo) p.echo = { name: ns, port: 9090 };
  if (o.node) p.node = o.node;
  if (o.ttl) p.svidTtlSeconds = o.ttl;
  return p;
}

Deno.test("mesh identity e2e: an expired SVID is dropped, its hops fail and its connections close", async () => {
  const rig = await startIdentityRig({
    pods: [
      pod("a", "client"),
      pod("c", "caller", { ttl: TTL }),
      pod("e", "e", { echo: true, ttl: TTL }),
      pod("b", "b", { node: "node-2", echo: true, ttl: TTL }),
      pod("d", "d", { node: "node-2", echo: true }),
    ],
    services: (p) => ["b", "d", "e"].flatMap((s) => podService(s, s, [p[s].ip], 9090)),
  });
  try {
    const td = rig.spire.trustDomain;
    const [n1, n2] = [rig.nodes["node-1"], rig.nodes["node-2"]];
    const { a, c } = rig.pods;
    const host = (s: string) => `${s}.aether.internal:8080`;
    const hops = [
      { from: a, to: "b", expiring: "b", holder: n2, holderName: "node-2", caller: "a/client" },
      { from: a, to: "e", expiring: "e", holder: n1, holderName: "node-1", caller: "a/client" },
      { from: c, to: "d", expiring: "c", holder: n1, holderName: "node-1", caller: "c/caller" },
    ];
    const sa = { b: "b", c: "caller", e: "e" } as Record<string, string>;
    for (const h of [...hops, { from: a, to: "d" }]) await answers(h.from, host(h.to));
    for (const h of hops) {
      const pooled = await upstreamActive(n1, `${h.to}.aether.internal|${h.caller}`);
      assert.ok(pooled > 0, `node-1 pools a connection for ${h.caller} → ${h.to}`);
    }

    await rig.spire.stopAgent();
    const down = (n: NodeAgent) => n.metrics.gauge("aether_identity_spire_connected", "").get();
    await waitFor("SPIRE down on both nodes", () => {
      return Promise.resolve(down(n1) === 0 && down(n2) === 0 || undefined);
    });
    // The last SVIDs: nothing renews them now.
    const expiring = hops.map((h) => {
      const id = `spiffe://${td}/ns/${h.expiring}/sa/${sa[h.expiring]}`;
      const cert = secretPem(h.holder, h.holderName, id)!.cert!;
      return { ...h, cert, exp: expiryOf(cert) };
    });
    const since = (t: number) => ((Date.now() - t) / 1000).toFixed(1);

    // Each hop fails once the SVID expired (0 answers after it), node-1's connections for it
    // close, and the Envoy that held the certificate holds it no more.
    const results = await Promise.all(expiring.map(async (h) => {
      const failed = await failsAfter(h.from, host(h.to), h.exp, BOUND_S);
      const [closed, gone] = await Promise.all([
        connectionsClosed(n1, `${h.to}.aether.internal|${h.caller}`, h.exp, BOUND_S),
        certificateGone(h.holder, h.cert, h.exp, BOUND_S),
      ]);
      return { failed, closed, gone };
    }));
    const lines = expiring.map((h, i) => {
      const what = `${h.caller} → ${h.to} (${h.expiring}'s SVID)`;
      const { failed: f, closed: cl, gone: g } = results[i];
      assert.ok(f, `${what} still answered 200 ${since(h.exp)} s after the SVID expired`);
      assert.equal(f.okAfter, 0, `${what}: answered 200 after the SVID expired`);
      assert.ok(cl, `${what}: node-1 still has a connection ${since(h.exp)} s after expiry`);
      assert.ok(g, `${what}: ${h.holderName}'s Envoy still holds the certificate`);
      return `${what}: failed ${f.afterS.toFixed(1)} s after expiry (HTTP ${f.status}), ` +
        `connections closed by ${cl.toFixed(1)} s, certificate gone by ${g.toFixed(1)} s`;
    });
    for (const h of expiring) {
      assert.notEqual(await statusFrom(h.from, host(h.to)), 200, `${h.to} stays refused`);
    }
    assert.equal(await statusFrom(a, host("d")), 200, "a → d, both SVIDs valid, still answers");
    console.log(`expiry:\n  ${lines.join("\n  ")}`);

    // SPIRE back: every identity is served again.
    await rig.spire.startAgent();
    const back = Date.now();
    for (const h of hops) await answers(h.from, host(h.to));
    console.log(`expiry: all served again ${since(back)} s after SPIRE was back`);
  } finally {
    await rig.close();
  }
});
