/**
 * Two Envoys under one node id: the node is translated for what all its open streams share;
 * the latest open stream is current and, when it closes, the latest remaining one takes over.
 */
import assert from "node:assert/strict";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { capabilityView, NodeStreams } from "./node_streams.ts";
import { type TrackedStream, XdsMetrics, XdsTracker } from "./tracker.ts";

const IL = "internal_listener";

Deno.test("capabilityView: the intersection, and per missing capability how many streams lack it", () => {
  assert.deepEqual(capabilityView([]), { shared: [], lacking: new Map() });
  assert.deepEqual(capabilityView([[IL, "x"]]), { shared: [IL, "x"], lacking: new Map() });
  assert.deepEqual(capabilityView([[], [IL]]), { shared: [], lacking: new Map([[IL, 1]]) });
  assert.deepEqual(capabilityView([["x", IL], [IL], ["x"], [IL, "x"]]), {
    shared: [],
    lacking: new Map([[IL, 1], ["x", 1]]),
  });
  assert.deepEqual(capabilityView([[IL], [], []]), { shared: [], lacking: new Map([[IL, 2]]) });
});

function stream(nodeId: string, capabilities: string[], name = nodeId): TrackedStream {
  return {
    nodeId,
    capabilities,
    ackedVersion: () => name,
    isReady: () => true,
    describe: () => ({ nodeId, mode: "delta", capabilities, ready: true, types: [] }),
  };
}

Deno.test("NodeStreams: the latest open stream is current; closing it hands over to the latest other", () => {
  const ns = new NodeStreams<TrackedStream>();
  const [a, b, c, other] = [
    stream("n", [], "a"),
    stream("n", [IL], "b"),
    stream("n", [IL], "c"),
    stream("m", []),
  ];
  for (const s of [a, b, c, other]) ns.add(s);
  assert.equal(ns.current("n"), c);
  assert.deepEqual(ns.lacking(), new Map([[IL, 1]]));
  assert.ok(ns.remove(c));
  assert.equal(ns.current("n"), b, "the latest remaining takes over");
  assert.ok(!ns.remove(c), "already gone");
  assert.ok(ns.remove(b));
  assert.equal(ns.current("n"), a);
  assert.deepEqual(ns.view("n"), { shared: [], lacking: new Map() });
  assert.ok(ns.remove(a));
  assert.equal(ns.current("n"), undefined);
  assert.deepEqual(ns.nodeIds(), ["m"]);
});

Deno.test("XdsTracker: shared capabilities on open and close, gauge, warn log, status", () => {
  const registry = new Registry();
  const logs: string[] = [];
  const t = new XdsTracker(new XdsMetrics(registry), new Logger("xds", (l) => logs.push(l)));
  const gauge = () =>
    registry.render().split("\n").find((l) =>
      l.startsWith(`aether_xds_streams_lacking_capability{capability="${IL}"}`)
    );
  const [older, newer] = [stream("n", [], "older"), stream("n", [IL], "newer")];
  assert.deepEqual(t.open(newer), [IL], "alone, the newer gets what it advertised");
  assert.equal(gauge(), undefined, "no series before any stream lacked a capability");
  assert.deepEqual(t.open(older), []);
  assert.match(gauge()!, / 1$/);
  const warn = logs.find((l) => l.includes("restart that Envoy with the current bootstrap"));
  assert.ok(warn?.includes(IL) && warn.includes('"node":"n"'), logs.join("\n"));
  assert.equal(t.ackedVersion("n", "t"), "older", "the latest open stream is current");
  assert.deepEqual(t.status("n"), { ...older.describe(), streams: 2, nodeCapabilities: [] });
  assert.deepEqual(t.close(older), [IL], "the older went: the newer may have everything");
  assert.match(gauge()!, / 0$/);
  assert.equal(t.ackedVersion("n", "t"), "newer", "the newer became current");
  assert.deepEqual(t.status("n"), { ...newer.describe(), streams: 1, nodeCapabilities: [IL] });
  assert.equal(t.close(older), undefined, "closing twice is a no-op");
  assert.equal(t.close(newer), undefined, "the last stream: nothing to re-translate for");
  assert.deepEqual(t.nodeIds(), []);
});
