/**
 * A rolling upgrade (or a hot restart, which keeps the node id) puts two Envoys on one node id:
 * the running one from an older bootstrap (no internal-listener extension, no
 * `aether.capabilities`) and its successor from the current bootstrap. The node is translated
 * for what both can take: neither NACKs, a/client → b works over mTLS through the older one, the
 * gap is visible (gauge, warn log, `/debug/xds`), and once the older one stops the newer one is
 * sent the internal listeners.
 */
import assert from "node:assert/strict";
import { curlFrom } from "./mesh_harness.ts";
import { waitFor } from "./peers/proc.ts";
import { startIdentityMesh, startNodeEnvoy } from "./identity_harness.ts";
import type { EnvoyProcess } from "../agent/xds/server/_test_utils.ts";

/** Envoy's listener names, sorted. */
async function listenerNames(envoy: EnvoyProcess): Promise<string[]> {
  const text = await (await fetch(`${envoy.adminUrl}/listeners`)).text();
  return text.split("\n").map((l) => l.split("::")[0].trim()).filter(Boolean).sort();
}

/** The sum of Envoy's counters whose name matches `pattern`. */
async function counter(envoy: EnvoyProcess, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${envoy.adminUrl}/stats`)).text();
  return text.split("\n").flatMap((l) => {
    const [name, value] = l.split(": ");
    return pattern.test(name) && /^\d+$/.test(value ?? "") ? [Number(value)] : [];
  }).reduce((a, b) => a + b, 0);
}

Deno.test("mesh identity e2e: an older and a newer Envoy under one node id share the TCP hop, no NACK; the newer gets internal listeners once the older stops", async () => {
  let older: EnvoyProcess | undefined;
  let newer: EnvoyProcess | undefined;
  const m = await startIdentityMesh(undefined, {
    node: { envoy: "none" },
    externalEnvoy: async (node) => {
      older = await startNodeEnvoy(node, true);
      await node.waitReady(60_000);
      newer = await startNodeEnvoy(node, false);
      return { stop: async () => void await Promise.all([older!.stop(), newer!.stop()]) };
    },
  });
  const diag = () =>
    `older:\n${older?.logs().slice(-2000)}\nnewer:\n${newer?.logs().slice(-2000)}\n` +
    `nack: ${JSON.stringify(m.node.xds.lastNack(m.nodeName))}\n${m.logs.slice(-30).join("\n")}`;
  const admin = `http://${m.node.admin.address}`;
  const gauge = async () => {
    const text = await (await fetch(`${admin}/metrics`)).text();
    const line = text.split("\n").find((l) =>
      l.startsWith('aether_xds_streams_lacking_capability{capability="internal_listener"}')
    );
    return line ? Number(line.split(" ").pop()) : undefined;
  };
  const debugNode = async () => {
    const doc = await (await fetch(`${admin}/debug/xds`)).json();
    return (doc.streams as { nodeId: string; streams: number; nodeCapabilities: string[] }[])
      .find((s) => s.nodeId === m.nodeName);
  };
  try {
    const td = m.spire.trustDomain;
    const xfcc = new RegExp(
      `^By=spiffe://${td}/ns/b/sa/b;Hash=[0-9a-f]+;URI=spiffe://${td}/ns/a/sa/client$`,
    );
    // Both Envoys converge on one config, the one without internal listeners.
    const names = await waitFor("both Envoys hold the same listeners", async () => {
      const [o, n] = [await listenerNames(older!), await listenerNames(newer!)];
      return o.join() === n.join() ? o : undefined;
    }, 60_000).catch((e) => {
      throw new Error(`${e}\n${diag()}`);
    });
    assert.ok(names.some((n) => n.startsWith("inbound|b/b-0")), names.join("\n"));
    assert.ok(!names.some((n) => n.startsWith("inbound-internal|")), names.join("\n"));
    assert.deepEqual(m.node.snapshots.capabilities(m.nodeName), [], "translated for the shared");
    assert.equal(await gauge(), 1, "one stream lacks internal_listener");
    const node = await debugNode();
    assert.equal(node?.streams, 2, JSON.stringify(node));
    assert.deepEqual(node?.nodeCapabilities, []);
    const warn = m.logs.find((l) => l.includes("restart that Envoy with the current bootstrap"));
    assert.ok(warn?.includes("internal_listener") && warn.includes(m.nodeName), diag());

    // mTLS through the older Envoy: the kernel spreads new connections over both (reuse_port);
    // any listener of the older one counts (its upstream pool may reuse one hop connection).
    await waitFor("a/client → b over mTLS through the older Envoy", async () => {
      const r = await curlFrom(m.a, "b.aether.internal:8080", { path: "/hello" });
      assert.equal(r.first.status, 200, JSON.stringify(r.first));
      const headers = r.first.json!.headers as Record<string, string>;
      assert.match(headers["x-forwarded-client-cert"], xfcc);
      const cx = await counter(older!, /^listener\.(?!admin\.).+\.downstream_cx_total$/);
      return cx > 0 ? cx : undefined;
    }, 60_000).catch(async (e) => {
      const cx = async (
        envoy: EnvoyProcess,
      ) => (await (await fetch(`${envoy.adminUrl}/stats?filter=downstream_cx_total`)).text());
      throw new Error(`${e}\nolder: ${await cx(older!)}\nnewer: ${await cx(newer!)}\n${diag()}`);
    });
    for (const envoy of [older!, newer!]) {
      assert.equal(await counter(envoy, /update_rejected$/), 0, diag());
    }
    assert.equal(m.node.xds.lastNack(m.nodeName), undefined, diag());

    // The older Envoy goes: the newer one is sent the internal listeners.
    await older!.stop();
    await waitFor("the newer Envoy gets the internal listener", async () => {
      const n = await listenerNames(newer!);
      return n.some((l) => l.startsWith("inbound-internal|")) ? n : undefined;
    }, 60_000).catch((e) => {
      throw new Error(`${e}\n${diag()}`);
    });
    assert.deepEqual(m.node.snapshots.capabilities(m.nodeName), ["internal_listener"]);
    assert.equal(await gauge(), 0);
    const after = await debugNode();
    assert.equal(after?.streams, 1, JSON.stringify(after));
    assert.deepEqual(after?.nodeCapabilities, ["internal_listener"]);
    await m.node.waitReady(60_000);
    const r = await curlFrom(m.a, "b.aether.internal:8080", { path: "/after" });
    assert.equal(r.first.status, 200, JSON.stringify(r.first));
    assert.match(
      (r.first.json!.headers as Record<string, string>)["x-forwarded-client-cert"],
      xfcc,
    );
    assert.equal(await counter(newer!, /update_rejected$/), 0, diag());
    assert.equal(m.node.xds.lastNack(m.nodeName), undefined, diag());
  } finally {
    await m.close();
  }
});
