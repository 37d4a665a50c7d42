import { assertEquals } from "../testbed/assert.ts";
import { type PlannedStatuses, planStatus } from "./status_plan.ts";
import type { SourceObject } from "../lib/source/mod.ts";

const ours = (n: string) => n.startsWith("gateway.aether.io/");
const T0 = "2026-01-01T00:00:00Z", T1 = "2026-01-02T00:00:00Z";
const accepted = (status: "True" | "False", time: string) => ({
  type: "Accepted",
  status,
  reason: status === "True" ? "Accepted" : "NotAllowedByListeners",
  message: "",
  observedGeneration: 1,
  lastTransitionTime: time,
});
const entry = (controllerName: string, gw: string, status: "True" | "False", time: string) => ({
  parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: gw },
  controllerName,
  conditions: [accepted(status, time)],
});
const route = (parents: unknown[]): SourceObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name: "r", namespace: "default", resourceVersion: "7" },
  spec: {},
  status: { parents },
});

Deno.test("planStatus: ours merged (times kept), others kept, target carries the resourceVersion", () => {
  const live = route([
    entry("gateway.aether.io/edge", "gw", "True", T0),
    entry("x.io/o", "o", "True", T0),
  ]);
  const computed = {
    parents: [entry("gateway.aether.io/edge", "gw", "True", "1970-01-01T00:00:00Z")],
  };
  const [u] = planStatus(
    [live],
    [{
      apiVersion: live.apiVersion,
      kind: "HTTPRoute",
      namespace: "default",
      name: "r",
      status: computed,
    }],
    T1,
    ours,
  );
  assertEquals(u.target.resourceVersion, "7");
  assertEquals(u.status, live.status);
});

Deno.test("planStatus: a route no longer ours loses our entries only", () => {
  const live = route([
    entry("gateway.aether.io/edge", "gw", "True", T0),
    entry("x.io/o", "o", "False", T0),
  ]);
  const updates = planStatus([live], [], T1, ours);
  assertEquals(updates.map((u) => u.status), [{ parents: [entry("x.io/o", "o", "False", T0)] }]);
  // Nothing of ours left: nothing planned.
  assertEquals(planStatus([route([entry("x.io/o", "o", "True", T0)])], [], T1, ours), []);
});

Deno.test("planStatus: an unchanged object with an unchanged status is not planned again", () => {
  const live = route([entry("gateway.aether.io/edge", "gw", "True", T0)]);
  const status = (s: unknown) => ({
    apiVersion: live.apiVersion,
    kind: "HTTPRoute",
    namespace: "default",
    name: "r",
    status: s,
  });
  const computed = { parents: [entry("gateway.aether.io/edge", "gw", "True", T0)] };
  const planned: PlannedStatuses = new WeakMap();
  const plan = (o: SourceObject, s: unknown) =>
    planStatus([o], [status(s)], T1, ours, undefined, planned);
  assertEquals(plan(live, computed).length, 1);
  // The same object and status: left out, and not taken for a route no longer ours either.
  assertEquals(plan(live, computed), []);
  // The status made again, equal: left out. A different status, or the object changed: planned.
  assertEquals(plan(live, structuredClone(computed)), []);
  const again = { parents: [entry("gateway.aether.io/edge", "gw", "False", T0)] };
  assertEquals(plan(live, again).length, 1);
  const changed = { ...live, metadata: { ...live.metadata, resourceVersion: "8" } };
  assertEquals(plan(changed, again).map((u) => u.target.resourceVersion), ["8"]);
});
