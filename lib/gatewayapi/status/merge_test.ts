import { assert, assertEquals } from "../../../testbed/assert.ts";
import { mergeConditions, mergeStatus, parentKey, withOtherParents } from "./merge.ts";
import type { Condition } from "../types.ts";

const T0 = "2026-01-01T00:00:00Z", T1 = "2026-01-02T00:00:00Z", EPOCH = "1970-01-01T00:00:00Z";

const cond = (type: string, status: Condition["status"], time = EPOCH, gen = 1): Condition => ({
  type,
  status,
  reason: status === "True" ? type : "Invalid",
  message: "m",
  observedGeneration: gen,
  lastTransitionTime: time,
});

Deno.test("mergeConditions: same status keeps the previous time; a changed status gets now", () => {
  const prev = [cond("Accepted", "True", T0), cond("Programmed", "False", T0)];
  const next = [cond("Accepted", "True", EPOCH, 2), cond("Programmed", "True", EPOCH, 2)];
  const out = mergeConditions(prev, next, T1);
  assertEquals(out.map((c) => c.lastTransitionTime), [T0, T1]);
  // Everything else comes from next (reason, message, observedGeneration).
  assertEquals(out.map((c) => c.observedGeneration), [2, 2]);
  assertEquals(out[1].reason, "Programmed");
});

Deno.test("mergeConditions: new types get now; types only in previous are dropped", () => {
  const out = mergeConditions([cond("Old", "True", T0)], [cond("ResolvedRefs", "True")], T1);
  assertEquals(out.map((c) => [c.type, c.lastTransitionTime]), [["ResolvedRefs", T1]]);
  assertEquals(mergeConditions(undefined, [cond("A", "True")], T1)[0].lastTransitionTime, T1);
});

Deno.test("mergeConditions: a reason or message change alone keeps the time", () => {
  const prev = [{ ...cond("Accepted", "False", T0), reason: "NotAllowedByListeners" }];
  const next = [{ ...cond("Accepted", "False"), reason: "NoMatchingParent", message: "other" }];
  const out = mergeConditions(prev, next, T1);
  assertEquals(out[0].lastTransitionTime, T0);
  assertEquals(out[0].reason, "NoMatchingParent");
});

Deno.test("mergeConditions: unchanged input comes back as the same array, inputs untouched", () => {
  const next = [cond("Accepted", "True", T0)];
  assert(mergeConditions([cond("Accepted", "True", T0)], next, T1) === next);
  const frozen = Object.freeze([Object.freeze(cond("Accepted", "True"))]);
  const out = mergeConditions([cond("Accepted", "True", T0)], frozen, T1);
  assertEquals(out[0].lastTransitionTime, T0);
  assertEquals(frozen[0].lastTransitionTime, EPOCH);
});

Deno.test("mergeStatus: Gateway conditions and listener conditions matched by name", () => {
  const prev = {
    conditions: [cond("Accepted", "True", T0)],
    listeners: [
      { name: "http", attachedRoutes: 1, conditions: [cond("Programmed", "True", T0)] },
      { name: "https", attachedRoutes: 0, conditions: [cond("Programmed", "False", T0)] },
    ],
  };
  const next = {
    conditions: [cond("Accepted", "True")],
    addresses: [{ type: "IPAddress", value: "10.0.0.1" }],
    listeners: [
      { name: "https", attachedRoutes: 2, conditions: [cond("Programmed", "True")] },
      { name: "http", attachedRoutes: 3, conditions: [cond("Programmed", "True")] },
      { name: "new", attachedRoutes: 0, conditions: [cond("Programmed", "True")] },
    ],
  };
  // deno-lint-ignore no-explicit-any
  const out = mergeStatus(prev, next, T1) as any;
  assertEquals(out.conditions[0].lastTransitionTime, T0);
  assertEquals(
    // deno-lint-ignore no-explicit-any
    out.listeners.map((l: any) => [l.name, l.attachedRoutes, l.conditions[0].lastTransitionTime]),
    [["https", 2, T1], ["http", 3, T0], ["new", 0, T1]],
  );
  assertEquals(out.addresses, next.addresses);
});

Deno.test("mergeStatus: route parents matched by parentRef and controllerName", () => {
  const edge = "gateway.aether.io/edge";
  const ref = { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw", namespace: "a" };
  const prev = {
    parents: [
      { parentRef: ref, controllerName: edge, conditions: [cond("Accepted", "True", T0)] },
      {
        parentRef: { ...ref, sectionName: "http" },
        controllerName: edge,
        conditions: [cond("Accepted", "True", T0)],
      },
    ],
  };
  const next = {
    parents: [
      {
        parentRef: { ...ref, sectionName: "http" },
        controllerName: edge,
        conditions: [cond("Accepted", "False")],
      },
      { parentRef: ref, controllerName: edge, conditions: [cond("Accepted", "True")] },
      { parentRef: ref, controllerName: "other.io/x", conditions: [cond("Accepted", "True")] },
    ],
  };
  // deno-lint-ignore no-explicit-any
  const out = mergeStatus(prev, next, T1) as any;
  // deno-lint-ignore no-explicit-any
  assertEquals(out.parents.map((p: any) => p.conditions[0].lastTransitionTime), [T1, T0, T1]);
});

Deno.test("mergeStatus: an unchanged status is returned as the same object", () => {
  const s = { conditions: [cond("Accepted", "True", T0)] };
  assert(mergeStatus({ conditions: [cond("Accepted", "True", T0)] }, s, T1) === s);
  assertEquals(mergeStatus(undefined, undefined, T1), undefined);
});

Deno.test("parentKey: absent group and kind mean Gateway API Gateway", () => {
  assertEquals(
    parentKey({ name: "gw" }),
    parentKey({ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" }),
  );
  assert(parentKey({ name: "gw", port: 80 }) !== parentKey({ name: "gw" }));
  assert(parentKey({ group: "", kind: "Service", name: "s" }) !== parentKey({ name: "s" }));
});

Deno.test("withOtherParents: other controllers' entries are kept after ours", () => {
  const mine = (n: string) => n.startsWith("gateway.aether.io/");
  const prev = {
    parents: [
      { controllerName: "gateway.aether.io/edge", parentRef: { name: "old" } },
      { controllerName: "example.com/other", parentRef: { name: "x" } },
    ],
  };
  const ours = {
    parents: [{ controllerName: "gateway.aether.io/edge", parentRef: { name: "gw" } }],
  };
  // deno-lint-ignore no-explicit-any
  const out = withOtherParents(prev, ours, mine) as any;
  // deno-lint-ignore no-explicit-any
  assertEquals(out.parents.map((p: any) => p.parentRef.name), ["gw", "x"]);
  assert(withOtherParents({ parents: [] }, ours, mine) === ours);
});

Deno.test("mergeStatus: unchanged listeners and parents keep the status object", () => {
  const gw = { listeners: [{ name: "http", conditions: [cond("Programmed", "True", T0)] }] };
  assert(mergeStatus(structuredClone(gw), gw, T1) === gw);
  const route = {
    parents: [{ parentRef: { name: "g" }, conditions: [cond("Accepted", "True", T0)] }],
  };
  assert(mergeStatus(structuredClone(route), route, T1) === route);
});
