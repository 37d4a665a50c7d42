/**
 * A pod with a new identity can call at once (docs/identity.md "Fix first"): a/client calls b;
 * then pod e with a new identity (a/newcomer) appears. Once the node agent serves its SVID, e's
 * calls to b succeed within seconds, and no cluster of e's waited for its endpoints until Envoy's
 * initial fetch timeout (15 s): each new per-caller cluster `<cluster>|a/newcomer` gets its
 * ClusterLoadAssignment at once.
 */
import assert from "node:assert/strict";
import { waitFor } from "./peers/proc.ts";
import { curlFrom } from "./mesh_harness.ts";
import { netPodObject, startIdentityMesh } from "./identity_harness.ts";
import { answers, clusterStats, statusFrom } from "./identity_probes.ts";
import {
  DelegatedIdentityClient,
  identitySelectors,
  type Selector,
} from "../agent/identity/mod.ts";
import { Logger } from "../lib/log/mod.ts";

/** How soon after its SVID is in Envoy a new caller's calls must succeed (loaded machine). */
const BOUND_S = 8;

/** Resolves once the SPIRE agent serves an SVID for these selectors (its entry is synced). */
async function spireHas(adminSocket: string, selectors: Selector[]): Promise<void> {
  const client = new DelegatedIdentityClient(adminSocket, new Logger("test", () => {}));
  let got = false;
  const sub = client.subscribeSvids(selectors, { onUpdate: (s) => got ||= s.length > 0 });
  try {
    await waitFor("the SPIRE agent has the entry", () => Promise.resolve(got || undefined), 90_000);
  } finally {
    sub.close();
    client.close();
  }
}

Deno.test("mesh identity e2e: a pod with a new identity calls at once, its clusters get endpoints", async () => {
  const rig = await startIdentityMesh();
  try {
    const B = "b.aether.internal:8080";
    await answers(rig.a, B);

    // A pod with an identity the node has not had yet, whose entry the SPIRE agent already has
    // (so its SVID comes at once and the wait measured is the mesh's, not SPIRE's sync).
    const eId = await rig.spire.registerPod("a", "newcomer");
    await spireHas(rig.spire.adminSocket, identitySelectors("a", "newcomer"));
    const e = await rig.net.addPod("aether-e");
    rig.objects.push(netPodObject(e, "a", "newcomer-0", "newcomer", rig.nodeName));
    const appeared = Date.now();
    await rig.write();
    await waitFor("e's SVID served", () => {
      const names = rig.node.snapshots.resources(rig.nodeName)?.secrets.map((s) => s.name) ?? [];
      return Promise.resolve(names.includes(eId) || undefined);
    }, 90_000);
    const served = Date.now();
    const statuses: number[] = [];
    const ok = await waitFor("e → b", async () => {
      const s = await statusFrom(e, B);
      statuses.push(s);
      return s === 200 ? Date.now() : undefined;
    }, 60_000);
    const wait = (ok - served) / 1000;
    console.log(
      `new caller: SVID served ${((served - appeared) / 1000).toFixed(1)} s after the pod ` +
        `appeared; first 200 ${wait.toFixed(1)} s after that (before it: ${statuses.slice(0, -1)})`,
    );
    assert.ok(wait <= BOUND_S, `e's first 200 came ${wait.toFixed(1)} s after its SVID`);
    const stats = await clusterStats(rig.node, "b.aether.internal|a/newcomer");
    assert.equal(stats.init_fetch_timeout ?? -1, 0, "e's cluster never timed out on its endpoints");
    assert.equal(stats.assignment_use_cached ?? 0, 0, "nor fell back on Envoy's EDS cache");
    // b sees e's identity.
    const r = await curlFrom(e, B);
    assert.equal(r.first.status, 200);
    const xfcc = (r.first.json!.headers as Record<string, string>)["x-forwarded-client-cert"];
    assert.match(xfcc, new RegExp(`;URI=${eId}$`));
  } finally {
    await rig.close();
  }
});
