/**
 * The FFI applier against real network namespaces and real nftables (root; peers `ip`, `nft`):
 * every lib/nft golden case applied and read back through the `nft` CLI, the table only in the
 * pod netns, connections redirected (VIP:port in the set to the capture listener, DNS to the
 * responder) and left alone (other ports, pod IPs), a set sync that keeps the table, and the
 * errors for a netns that is gone or a library that is missing.
 */
import assert from "node:assert/strict";
import { normalizeSpec, sameSpec } from "../../lib/nft/mod.ts";
import { nftGoldenCases } from "../../lib/nft/_golden_test_utils.ts";
import { createNetns } from "./_netns_test_utils.ts";
import { CaptureError, NftApplier } from "./mod.ts";

Deno.test("nft applier: every golden case applies, reads back by the CLI, syncs as rendered", async () => {
  const ns = await createNetns();
  const applier = new NftApplier();
  try {
    for (const c of nftGoldenCases()) {
      // A fresh context each case: the first apply of a context replaces (or adopts).
      applier.remove(ns.path);
      assert.equal(applier.apply(ns.path, c.spec), "replaced", c.name);
      const t = (await ns.listed())!;
      assert.deepEqual(t.problems, [], c.name);
      assert.ok(sameSpec(t.spec, normalizeSpec(c.spec)), `${c.name}: ${JSON.stringify(t.spec)}`);
      assert.deepEqual(applier.read(ns.path)?.spec, t.spec, c.name);
      if (!c.next) continue;
      const how = applier.apply(ns.path, c.next);
      const after = (await ns.listed())!;
      assert.deepEqual(after.problems, [], c.name);
      assert.ok(sameSpec(after.spec, normalizeSpec(c.next)), c.name);
      if (how === "replaced") assert.notEqual(after.handle, t.handle, c.name);
      else assert.equal(after.handle, t.handle, `${c.name}: ${how} keeps the table`);
    }
  } finally {
    applier.close();
    await ns.remove();
  }
});

Deno.test("nft applier: the table is made in the pod netns only", async () => {
  const ns = await createNetns();
  const applier = new NftApplier();
  const hostHas = async () => {
    const o = await new Deno.Command("nft", { args: ["list", "tables"], stdout: "piped" }).output();
    return /table inet aether\b/.test(new TextDecoder().decode(o.stdout));
  };
  try {
    const before = await hostHas();
    applier.apply(ns.path, { vips: [{ address: "10.96.0.10", port: 80 }], capturePort: 15001 });
    assert.ok(await ns.listed());
    if (!before) assert.equal(await hostHas(), false, "the host netns got the table");
  } finally {
    applier.close();
    await ns.remove();
  }
});

const LOCAL = [
  "10.96.0.10/32", // a mesh VIP
  "10.244.0.5/32", // the pod's own IP
  "10.96.0.53/32", // the cluster DNS server
  "10.96.0.54/32", // another server on :53
  "192.0.2.1/32", // the node (the agent's DNS responder)
  "fd00::10/128",
  "fd00::53/128",
  "2001:db8::1/128",
];
const LISTEN = [
  { proto: "tcp", host: "127.0.0.1", port: 15001, name: "capture" },
  // REDIRECT in the output hook sends IPv6 to ::1.
  { proto: "tcp", host: "::1", port: 15001, name: "capture6" },
  { proto: "tcp", host: "::", port: 80, name: "direct80" },
  { proto: "tcp", host: "::", port: 81, name: "direct81" },
  { proto: "udp", host: "::", port: 53, name: "direct53" },
  { proto: "udp", host: "192.0.2.1", port: 18054, name: "dns-udp" },
  { proto: "tcp", host: "192.0.2.1", port: 18054, name: "dns-tcp" },
  { proto: "udp", host: "2001:db8::1", port: 18054, name: "dns6-udp" },
] as const;

Deno.test("nft applier: traffic to a VIP:port in the set lands on the capture listener, nothing else", async () => {
  const ns = await createNetns(LOCAL);
  const applier = new NftApplier();
  try {
    const spec = {
      vips: [{ address: "10.96.0.10", port: 80 }, { address: "fd00::10", port: 80 }],
      capturePort: 15001,
      dns: {
        servers: ["10.96.0.53", "fd00::53"],
        addresses: ["192.0.2.1", "2001:db8::1"],
        port: 18054,
      },
    };
    const connect = [
      { proto: "tcp", host: "10.96.0.10", port: 80 },
      { proto: "tcp", host: "10.96.0.10", port: 81 },
      { proto: "tcp", host: "10.244.0.5", port: 80 },
      { proto: "tcp", host: "fd00::10", port: 80 },
      { proto: "tcp", host: "fd00::10", port: 81 },
      { proto: "udp", host: "10.96.0.53", port: 53 },
      { proto: "tcp", host: "10.96.0.53", port: 53 },
      { proto: "udp", host: "fd00::53", port: 53 },
      { proto: "udp", host: "10.96.0.54", port: 53 },
    ] as const;
    // Without the table every connection goes where it was sent.
    const before = await ns.probe([...LISTEN], [...connect]);
    assert.equal(before["tcp 10.96.0.10:80"], "direct80");
    assert.equal(before["udp 10.96.0.53:53"], "direct53");
    assert.equal(applier.apply(ns.path, spec), "replaced");
    assert.deepEqual(await ns.probe([...LISTEN], [...connect]), {
      "tcp 10.96.0.10:80": "capture",
      "tcp 10.96.0.10:81": "direct81",
      "tcp 10.244.0.5:80": "direct80",
      "tcp [fd00::10]:80": "capture6",
      "tcp [fd00::10]:81": "direct81",
      "udp 10.96.0.53:53": "dns-udp",
      "tcp 10.96.0.53:53": "dns-tcp",
      "udp [fd00::53]:53": "dns6-udp",
      "udp 10.96.0.54:53": "direct53",
    });
    const counted = applier.read(ns.path)!.counters;
    assert.ok(counted.vips.packets >= 2 && counted.dns.packets >= 3, JSON.stringify(counted));

    // A set sync: :81 joins, the IPv6 VIP leaves; same table, new behaviour.
    const handle = (await ns.listed())!.handle;
    const next = {
      ...spec,
      vips: [{ address: "10.96.0.10", port: 80 }, { address: "10.96.0.10", port: 81 }],
    };
    assert.equal(applier.apply(ns.path, next), "synced");
    assert.equal((await ns.listed())!.handle, handle);
    const after = await ns.probe([...LISTEN], [
      { proto: "tcp", host: "10.96.0.10", port: 81 },
      { proto: "tcp", host: "fd00::10", port: 80 },
    ]);
    assert.deepEqual(after, { "tcp 10.96.0.10:81": "capture", "tcp [fd00::10]:80": "direct80" });

    // Removed: traffic goes where it was sent again.
    applier.remove(ns.path);
    assert.equal(await ns.listed(), undefined);
    const gone = await ns.probe([...LISTEN], [{ proto: "tcp", host: "10.96.0.10", port: 80 }]);
    assert.deepEqual(gone, { "tcp 10.96.0.10:80": "direct80" });
  } finally {
    applier.close();
    await ns.remove();
  }
});

Deno.test("nft applier: UDP to a mapped VIP:port lands on its local port; others go as sent", async () => {
  const ns = await createNetns(LOCAL);
  const applier = new NftApplier();
  const listen = [
    { proto: "udp", host: "127.0.0.1", port: 15100, name: "udp-a" },
    { proto: "udp", host: "127.0.0.1", port: 15101, name: "udp-b" },
    { proto: "udp", host: "::1", port: 15102, name: "udp-a6" },
    { proto: "udp", host: "::", port: 9000, name: "direct9000" },
  ] as const;
  const send = [
    { proto: "udp", host: "10.96.0.10", port: 9000 },
    { proto: "udp", host: "10.96.0.54", port: 9000 },
    { proto: "udp", host: "fd00::10", port: 9000 },
    { proto: "udp", host: "10.244.0.5", port: 9000 },
  ] as const;
  try {
    const spec = {
      vips: [],
      capturePort: 15001,
      udp: [
        { address: "10.96.0.10", port: 9000, to: 15100 },
        { address: "10.96.0.54", port: 9000, to: 15101 },
        { address: "fd00::10", port: 9000, to: 15102 },
      ],
    };
    assert.equal(applier.apply(ns.path, spec), "replaced");
    assert.deepEqual(await ns.probe([...listen], [...send]), {
      "udp 10.96.0.10:9000": "udp-a",
      "udp 10.96.0.54:9000": "udp-b",
      "udp [fd00::10]:9000": "udp-a6",
      "udp 10.244.0.5:9000": "direct9000",
    });
    // A map sync: b's local port moves, the IPv4 a leaves (deleted by its key).
    const handle = (await ns.listed())!.handle;
    const next = {
      ...spec,
      udp: [
        { address: "10.96.0.54", port: 9000, to: 15100 },
        { address: "fd00::10", port: 9000, to: 15102 },
      ],
    };
    assert.equal(applier.apply(ns.path, next), "synced");
    assert.equal((await ns.listed())!.handle, handle);
    assert.deepEqual(await ns.probe([...listen], [...send]), {
      "udp 10.96.0.10:9000": "direct9000",
      "udp 10.96.0.54:9000": "udp-a",
      "udp [fd00::10]:9000": "udp-a6",
      "udp 10.244.0.5:9000": "direct9000",
    });
  } finally {
    applier.close();
    await ns.remove();
  }
});

Deno.test("nft applier: a sync over a drifted table falls back to a replace", async () => {
  const ns = await createNetns();
  const applier = new NftApplier();
  try {
    const a = { address: "10.96.0.10", port: 80 }, b = { address: "10.96.0.11", port: 80 };
    applier.apply(ns.path, { vips: [a, b], capturePort: 15001 });
    // By hand: the element the sync will delete is already gone (1.0.6 fails such a batch).
    await ns.nft(["delete", "element", "inet", "aether", "mesh-vips4", "{ 10.96.0.11 . 80 }"]);
    assert.equal(applier.apply(ns.path, { vips: [a], capturePort: 15001 }), "replaced");
    assert.deepEqual((await ns.listed())!.spec.vips, [a]);
    // A table made by someone else (an earlier agent) that is already right is adopted.
    const fresh = new NftApplier();
    try {
      assert.equal(fresh.apply(ns.path, { vips: [a], capturePort: 15001 }), "unchanged");
      assert.equal(fresh.apply(ns.path, { vips: [a, b], capturePort: 15001 }), "synced");
    } finally {
      fresh.close();
    }
  } finally {
    applier.close();
    await ns.remove();
  }
});

Deno.test("nft applier: a netns that is gone is a clear error, removal stays quiet", async () => {
  const ns = await createNetns();
  const other = await createNetns();
  const applier = new NftApplier();
  const spec = { vips: [{ address: "10.96.0.10", port: 80 }], capturePort: 15001 };
  try {
    applier.apply(ns.path, spec);
    applier.apply(other.path, spec);
    assert.equal(applier.known, 2);
    assert.equal(applier.contexts, 0, "no libnftables context is kept between operations");
    await ns.remove();
    const gone = (e: unknown) =>
      e instanceof CaptureError && e.code === "netns-gone" && e.message.includes(ns.path);
    assert.throws(() => applier.apply(ns.path, { ...spec, vips: [] }), gone);
    assert.equal(applier.known, 1, "the gone netns is forgotten");
    assert.throws(() => applier.read(ns.path), gone);
    applier.remove(ns.path);
    applier.remove(ns.path);
    // The other pod is unaffected.
    assert.equal(applier.apply(other.path, { ...spec, vips: [] }), "synced");
    assert.deepEqual((await other.listed())!.spec.vips, []);
    assert.throws(
      () => applier.apply("/var/run/netns/aether-cap-never", spec),
      (e) => e instanceof CaptureError && /is gone/.test(e.message),
    );
    assert.throws(
      () => applier.apply("/etc/hostname", spec),
      (e) => e instanceof CaptureError && /not a network namespace/.test(e.message),
    );
  } finally {
    applier.close();
    await ns.remove();
    await other.remove();
  }
});

Deno.test("nft applier: a path that names a new netns gets a new context and the table", async () => {
  const ns = await createNetns();
  const applier = new NftApplier();
  const spec = { vips: [{ address: "10.96.0.10", port: 80 }], capturePort: 15001 };
  try {
    assert.equal(applier.apply(ns.path, spec), "replaced");
    await ns.recreate();
    assert.equal(await ns.listed(), undefined);
    // The old context would still reach the old netns (its socket keeps it alive) and see the
    // table in place; the applier notices the new netns behind the path instead.
    assert.equal(applier.apply(ns.path, spec), "replaced");
    assert.ok(sameSpec((await ns.listed())!.spec, normalizeSpec(spec)));
    assert.equal(applier.known, 1);
  } finally {
    applier.close();
    await ns.remove();
  }
});

Deno.test("nft applier: a missing libnftables says what to install", () => {
  assert.throws(
    () => new NftApplier("libnftables-missing.so.9"),
    (e) => e instanceof CaptureError && e.code === "library" && /libnftables1/.test(e.message),
  );
});
