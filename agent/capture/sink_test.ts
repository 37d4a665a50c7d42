/**
 * The capture sink over an in-memory applier: which pods get which table and when, what a
 * failing pod does to the others, drift repair on the timer, removal, the awaitable capture and
 * the metrics. sink_netns_test.ts runs the same sink against real netns and nftables.
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { NftSpecError } from "../../lib/nft/mod.ts";
import { FakeApplier, ManualTimer, pod, resolved, service } from "./_capture_test_utils.ts";
import { CaptureSink, type CaptureSinkOptions } from "./mod.ts";

const NODE = "node-a";
const services = [
  service("app", "web", ["10.96.0.10", "fd00::10"], [80, 8080]),
  service("app", "db", ["10.96.0.20"], [5432]),
];

function setup(extra: Partial<CaptureSinkOptions> = {}) {
  const applier = new FakeApplier(), timer = new ManualTimer(), metrics = new Registry();
  const lines: string[] = [];
  const sink = new CaptureSink({
    nodeName: NODE,
    applier,
    logger: new Logger("capture", (l) => lines.push(l), "debug"),
    metrics,
    every: timer.every,
    now: () => 1000,
    ...extra,
  });
  const counter = (name: string, labels = {}) => metrics.counter(name, "").get(labels);
  const gauge = (name: string, labels = {}) => metrics.gauge(name, "").get(labels);
  return { applier, timer, metrics, sink, lines, counter, gauge };
}

Deno.test("capture sink: this node's pods with a netns get every mesh VIP:port", () => {
  const { applier, sink, counter, gauge } = setup();
  sink.apply(resolved([
    ...services,
    pod("app", "a", NODE, "/run/netns/a"),
    pod("app", "b", NODE, "/run/netns/b"),
    pod("app", "elsewhere", "node-b", "/run/netns/c"),
    { ...pod("app", "no-netns", NODE, ""), metadata: { name: "no-netns", namespace: "app" } },
  ]));
  assert.deepEqual(applier.calls, ["apply /run/netns/a", "apply /run/netns/b"]);
  assert.deepEqual(applier.tables.get("/run/netns/a")?.spec, {
    vips: [
      { address: "10.96.0.10", port: 80 },
      { address: "10.96.0.10", port: 8080 },
      { address: "10.96.0.20", port: 5432 },
      { address: "fd00::10", port: 80 },
      { address: "fd00::10", port: 8080 },
    ],
    capturePort: 15001,
  });
  assert.deepEqual(sink.pods().map((p) => [p.key, p.state, p.vips, p.last]), [
    ["app/a", "captured", 5, "replaced"],
    ["app/b", "captured", 5, "replaced"],
  ]);
  assert.equal(counter("aether_capture_applies_total", { how: "replaced" }), 2);
  assert.equal(gauge("aether_capture_pods", { state: "captured" }), 2);
  assert.equal(gauge("aether_capture_vips"), 5);
});

Deno.test("capture sink: an unchanged spec touches no table; a new Service syncs each pod", () => {
  const { applier, sink, counter } = setup();
  const pods = [pod("app", "a", NODE, "/run/netns/a"), pod("app", "b", NODE, "/run/netns/b")];
  sink.apply(resolved([...services, ...pods], 1));
  const handle = applier.tables.get("/run/netns/a")!.handle;
  applier.calls.length = 0;
  sink.apply(resolved([...services, ...pods], 2));
  assert.deepEqual(applier.calls, []);
  sink.apply(resolved([...services, service("app", "new", ["10.96.0.30"], [80]), ...pods], 3));
  assert.deepEqual(applier.calls, ["apply /run/netns/a", "apply /run/netns/b"]);
  assert.equal(applier.tables.get("/run/netns/a")!.handle, handle, "synced, not replaced");
  assert.equal(counter("aether_capture_applies_total", { how: "synced" }), 2);
  assert.equal(sink.pod("app/a")?.vips, 6);
});

Deno.test("capture sink: a pod that left loses its table; a new sandbox replaces the old", () => {
  const { applier, sink, counter } = setup();
  sink.apply(resolved([
    ...services,
    pod("app", "a", NODE, "/run/netns/a"),
    pod("app", "b", NODE, "/run/netns/b"),
  ]));
  applier.calls.length = 0;
  sink.apply(resolved([...services, pod("app", "a", NODE, "/run/netns/a2")]));
  assert.deepEqual(applier.calls, [
    "remove /run/netns/a",
    "apply /run/netns/a2",
    "remove /run/netns/b",
  ]);
  assert.deepEqual([...applier.tables.keys()], ["/run/netns/a2"]);
  assert.deepEqual(sink.pods().map((p) => p.netnsPath), ["/run/netns/a2"]);
  assert.equal(counter("aether_capture_removals_total"), 2);
});

Deno.test("capture sink: removeAll takes every table away, a failed pod's too; then ignores revisions", async () => {
  const { applier, sink, timer, counter, gauge, lines } = setup();
  applier.gone.add("/run/netns/gone");
  const objects = [
    ...services,
    pod("app", "b", NODE, "/run/netns/b"),
    pod("app", "a", NODE, "/run/netns/a"),
    pod("app", "gone", NODE, "/run/netns/gone"),
    pod("app", "stuck", NODE, "/run/netns/stuck"),
  ];
  sink.apply(resolved(objects, 1));
  const remove = applier.remove.bind(applier);
  applier.remove = (path) => {
    if (path === "/run/netns/stuck") throw new Error("netlink says no");
    remove(path);
  };
  applier.calls.length = 0;
  assert.deepEqual(sink.removeAll(), {
    removed: ["app/a", "app/b", "app/gone"],
    failed: ["app/stuck"],
  });
  assert.deepEqual([...applier.tables.keys()], ["/run/netns/stuck"]);
  assert.deepEqual(sink.pods(), []);
  assert.equal(counter("aether_capture_removals_total"), 3);
  assert.equal(gauge("aether_capture_pods", { state: "captured" }), 0);
  assert.ok(
    lines.some((l) => l.includes("capture removal failed") && l.includes("netlink says no")),
  );
  applier.calls.length = 0;
  sink.apply(resolved(objects, 2));
  await timer.tick();
  assert.deepEqual(applier.calls, [], "nothing applied again after removeAll");
  sink.close();
  assert.ok(applier.closed);
});

Deno.test("capture sink: a pod whose netns is gone fails alone and is retried", () => {
  const { applier, sink, counter, gauge, lines } = setup();
  applier.gone.add("/run/netns/gone");
  const objects = [
    ...services,
    pod("app", "a", NODE, "/run/netns/a"),
    pod("app", "gone", NODE, "/run/netns/gone"),
  ];
  sink.apply(resolved(objects, 1));
  const gone = sink.pod("app/gone")!;
  assert.equal(gone.state, "failed");
  assert.match(gone.error!, /netns \/run\/netns\/gone is gone/);
  assert.equal(sink.pod("app/a")?.state, "captured");
  assert.equal(counter("aether_capture_failures_total", { code: "netns-gone" }), 1);
  assert.equal(gauge("aether_capture_pods", { state: "failed" }), 1);
  // The next revision retries only the failed pod; the same failure is logged once.
  applier.calls.length = 0;
  sink.apply(resolved(objects, 2));
  assert.deepEqual(applier.calls, ["apply /run/netns/gone"]);
  assert.equal(lines.filter((l) => l.includes('"capture failed"')).length, 1);
  assert.equal(sink.pod("app/gone")?.failures, 2);
  // Back (the path names a netns again): captured.
  applier.gone.delete("/run/netns/gone");
  sink.apply(resolved(objects, 3));
  assert.equal(sink.pod("app/gone")?.state, "captured");
  assert.equal(sink.pod("app/gone")?.error, undefined);
});

Deno.test("capture sink: the timer reads every table back and replaces only drifted ones", async () => {
  const { applier, sink, timer, counter } = setup();
  sink.apply(resolved([
    ...services,
    pod("app", "a", NODE, "/run/netns/a"),
    pod("app", "b", NODE, "/run/netns/b"),
    pod("app", "c", NODE, "/run/netns/c"),
  ]));
  applier.tables.delete("/run/netns/a"); // deleted by hand
  applier.tables.get("/run/netns/b")!.problems.push("foreign rule in chain output (handle 9)");
  applier.calls.length = 0;
  await timer.tick();
  assert.deepEqual(applier.calls, [
    "read /run/netns/a",
    "apply /run/netns/a replace",
    "read /run/netns/b",
    "apply /run/netns/b replace",
    "read /run/netns/c",
  ]);
  assert.deepEqual(applier.tables.get("/run/netns/b")!.problems, []);
  assert.equal(counter("aether_capture_drift_repairs_total"), 2);
  assert.deepEqual(sink.pods().map((p) => p.repairs), [1, 1, 0]);
  // A table with other elements than wanted is drift too.
  applier.tables.get("/run/netns/c")!.spec.vips.pop();
  await timer.tick();
  assert.equal(sink.pod("app/c")?.repairs, 1);
  assert.equal(applier.tables.get("/run/netns/c")!.spec.vips.length, 5);
});

Deno.test("capture sink: a read that fails marks the pod failed; the next tick retries it", async () => {
  const { applier, sink, timer } = setup();
  sink.apply(resolved([...services, pod("app", "a", NODE, "/run/netns/a")]));
  applier.gone.add("/run/netns/a");
  await timer.tick();
  assert.equal(sink.pod("app/a")?.state, "failed");
  applier.gone.delete("/run/netns/a");
  applier.calls.length = 0;
  await timer.tick();
  assert.deepEqual(applier.calls, ["apply /run/netns/a"]);
  assert.equal(sink.pod("app/a")?.state, "captured");
});

Deno.test("capture sink: whenCaptured by pod key or netns path, before and after", async () => {
  const { applier, sink } = setup();
  const byPath = sink.whenCaptured("/run/netns/a");
  const byKey = sink.whenCaptured("app/a");
  sink.apply(resolved([...services, pod("app", "a", NODE, "/run/netns/a")]));
  assert.equal((await byPath).key, "app/a");
  assert.equal((await byKey).netnsPath, "/run/netns/a");
  assert.equal((await sink.whenCaptured("app/a")).state, "captured");
  // Not in place: the abort says why.
  applier.gone.add("/run/netns/g");
  sink.apply(resolved([...services, pod("app", "g", NODE, "/run/netns/g")]));
  const ac = new AbortController();
  const waiting = sink.whenCaptured("app/g", ac.signal);
  ac.abort();
  await assert.rejects(waiting, /capture of app\/g is not in place: netns \/run\/netns\/g is gone/);
  const unknown = new AbortController();
  const never = sink.whenCaptured("app/nope", unknown.signal);
  unknown.abort();
  await assert.rejects(never, /not among this node's pods yet/);
  const pending = sink.whenCaptured("app/later");
  sink.close();
  await assert.rejects(pending, /capture sink closed/);
});

Deno.test("capture sink: DNS redirect and the captured-Service filter shape the spec", () => {
  const { applier, sink } = setup({
    dns: { servers: ["10.96.0.53"], addresses: ["192.0.2.1"], port: 18054 },
    captured: (svc) => svc.name !== "db",
    capturePort: 15009,
  });
  sink.apply(resolved([...services, pod("app", "a", NODE, "/run/netns/a")]));
  assert.deepEqual(applier.tables.get("/run/netns/a")?.spec, {
    vips: [
      { address: "10.96.0.10", port: 80 },
      { address: "10.96.0.10", port: 8080 },
      { address: "fd00::10", port: 80 },
      { address: "fd00::10", port: 8080 },
    ],
    capturePort: 15009,
    dns: { servers: ["10.96.0.53"], addresses: ["192.0.2.1"], port: 18054 },
  });
  assert.equal(sink.pod("/run/netns/a")?.dnsServers, 1);
});

Deno.test("capture sink: a cluster DNS named by its Service follows the Service's cluster IP", () => {
  const { applier, sink } = setup({
    dns: { servers: [], addresses: ["192.0.2.1"], port: 18054 },
    dnsServices: ["kube-system/kube-dns"],
  });
  const at = pod("app", "a", NODE, "/run/netns/a");
  sink.apply(resolved([...services, at]));
  assert.equal(applier.tables.get("/run/netns/a")?.spec.dns, undefined, "no such Service yet");
  const dnsSvc = (ip: string) => service("kube-system", "kube-dns", [ip], [53]);
  sink.apply(resolved([...services, dnsSvc("10.96.0.10"), at]));
  assert.deepEqual(applier.tables.get("/run/netns/a")?.spec.dns, {
    servers: ["10.96.0.10"],
    addresses: ["192.0.2.1"],
    port: 18054,
  });
  sink.apply(resolved([...services, dnsSvc("10.96.0.11"), at]));
  assert.deepEqual(applier.tables.get("/run/netns/a")?.spec.dns?.servers, ["10.96.0.11"]);
});

Deno.test("capture sink: an invalid DNS option throws before any table is touched", () => {
  const { applier, sink } = setup({
    dns: { servers: ["fd00::53"], addresses: ["192.0.2.1"], port: 18054 },
  });
  assert.throws(
    () => sink.apply(resolved([...services, pod("app", "a", NODE, "/run/netns/a")])),
    NftSpecError,
  );
  assert.deepEqual(applier.calls, []);
});

Deno.test("capture sink: close stops the timer and frees the applier, the tables stay", () => {
  const { applier, sink, timer } = setup();
  assert.equal(timer.scheduled, 1);
  sink.apply(resolved([...services, pod("app", "a", NODE, "/run/netns/a")]));
  sink.close();
  assert.equal(timer.scheduled, 0);
  assert.ok(applier.closed);
  assert.ok(applier.tables.has("/run/netns/a"));
  const off = setup({ repairIntervalMs: 0 });
  assert.equal(off.timer.scheduled, 0);
  off.sink.close();
});

Deno.test("capture sink: a repair yields between pods; one running is joined, a pod gone skipped", async () => {
  const { applier, sink } = setup();
  const pods = [pod("app", "a", NODE, "/run/netns/a"), pod("app", "b", NODE, "/run/netns/b")];
  sink.apply(resolved([...services, ...pods], 1));
  applier.calls.length = 0;
  const first = sink.repair();
  assert.equal(sink.repair(), first, "a second call joins the running one");
  // After the first pod's read the repair yields; b leaves meanwhile and is not read.
  assert.deepEqual(applier.calls, ["read /run/netns/a"]);
  sink.apply(resolved([...services, pods[0]], 2));
  await first;
  assert.deepEqual(applier.calls, ["read /run/netns/a", "remove /run/netns/b"]);
  // Closed while one runs: it stops.
  sink.apply(resolved([...services, ...pods], 3));
  applier.calls.length = 0;
  const running = sink.repair();
  sink.close();
  await running;
  assert.deepEqual(applier.calls, ["read /run/netns/a"]);
});
