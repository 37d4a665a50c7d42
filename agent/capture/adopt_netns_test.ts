/**
 * The pod adopter on a real network namespace (root; peer `ip`): a running pod the CNI plugin never
 * reported is found by its address (setns + getifaddrs through the FFI applier) and recorded with
 * that netns; once the pod leaves the node its adopted record goes.
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { PodAttachment } from "../../cni/mod.ts";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { resolved } from "./_capture_test_utils.ts";
import { createNetns } from "./_netns_test_utils.ts";
import { NftApplier, PodAdopter } from "./mod.ts";

Deno.test("pod adopter on real netns: found by address, recorded, forgotten when gone", async () => {
  const ns = await createNetns();
  const ip = await ensurePeer("ip");
  const sh = async (args: string[]) => {
    const r = await new Deno.Command(ip, { args, stderr: "piped" }).output();
    assert.ok(r.success, new TextDecoder().decode(r.stderr));
  };
  // A veth pair inside the netns stands in for the pod's interface (no dummy module here).
  await sh(["-n", ns.name, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p"]);
  await sh(["-n", ns.name, "addr", "add", "10.77.0.5/24", "dev", "eth0"]);
  await sh(["-n", ns.name, "link", "set", "eth0", "up"]);
  const applier = new NftApplier();
  const records: PodAttachment[] = [];
  const adopter = new PodAdopter({
    nodeName: "n1",
    netnsDir: "/var/run/netns",
    outsideNamespaces: [],
    addressesIn: (p) => applier.addresses(p),
    records: () => ({
      attachments: () => [...records],
      attach: (a) => Promise.resolve(void records.push(a)),
      detach: (id) =>
        Promise.resolve(void records.splice(records.findIndex((r) => r.containerId === id), 1)),
    }),
    logger: new Logger("adopt", () => {}, "error"),
  });
  const old = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace: "app", name: "old", uid: "u-1" },
    spec: { nodeName: "n1" },
    status: { phase: "Running", podIP: "10.77.0.5", podIPs: [{ ip: "10.77.0.5" }] },
  } as unknown as KubeObject;
  try {
    adopter.apply(resolved([old]));
    await adopter.settled();
    assert.equal(records.length, 1, JSON.stringify(records));
    assert.equal(records[0].netnsPath, ns.path);
    assert.equal(records[0].containerId, "adopted-u-1");
    assert.deepEqual(records[0].ips, ["10.77.0.5"]);
    adopter.apply(resolved([old]));
    await adopter.settled();
    assert.equal(records.length, 1, "recorded once");
    adopter.apply(resolved([]));
    await adopter.settled();
    assert.deepEqual(records, [], "the adopted record goes with the pod");
  } finally {
    applier.close();
    await ns.remove();
  }
});
