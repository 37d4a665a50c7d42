/**
 * ShownStatuses keeps its key index from one revision to the next: what a changed status is
 * merged over is always what its object showed in the revision before, never an older leftover
 * (an object that went and came back starts afresh, as it did when the index was rebuilt per
 * revision).
 */
import assert from "node:assert/strict";
import type { ObjectStatus } from "../gatewayapi/mod.ts";
import { ShownStatuses } from "./shown_statuses.ts";

const condition = (status: string) => ({
  conditions: [{ type: "Accepted", status, reason: "R", message: "", lastTransitionTime: "" }],
});

const routeStatus = (name: string, status: string): ObjectStatus => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  namespace: "default",
  name,
  status: condition(status),
});

/** The Accepted condition of `name` as shown: `<status>@<lastTransitionTime>`. */
function shownOf(shown: ObjectStatus[], name: string): string | undefined {
  const c = (shown.find((s) => s.name === name)?.status as ReturnType<typeof condition>)
    ?.conditions[0];
  return c && `${c.status}@${c.lastTransitionTime}`;
}

const day = (n: number) => new Date(`2026-01-0${n}T00:00:00Z`);

Deno.test("shown statuses: unchanged objects keep their shown object, changed ones their times", () => {
  const shown = new ShownStatuses();
  const a = routeStatus("a", "True"), b = routeStatus("b", "True");
  const first = shown.show([a, b], day(1));
  assert.equal(shownOf(first, "a"), "True@2026-01-01T00:00:00Z");

  // b recomputed (a new object, same content): a is the same shown object, b keeps its time.
  const second = shown.show([a, routeStatus("b", "True")], day(2));
  assert.equal(second[0], first[0]);
  assert.equal(shownOf(second, "b"), "True@2026-01-01T00:00:00Z");

  // b flips: stamped now; a untouched.
  const third = shown.show([a, routeStatus("b", "False")], day(3));
  assert.equal(shownOf(third, "b"), "False@2026-01-03T00:00:00Z");
  assert.equal(third[0], first[0]);
});

Deno.test("shown statuses: an object gone for a revision starts afresh when it comes back", () => {
  const shown = new ShownStatuses();
  const a = routeStatus("a", "True"), b = routeStatus("b", "True");
  shown.show([a, b], day(1));
  shown.show([a], day(2));
  // b's very status object again, and a recomputed b: both stamped now, as for a new object.
  assert.equal(shownOf(shown.show([a, b], day(3)), "b"), "True@2026-01-03T00:00:00Z");
  shown.show([a], day(4));
  assert.equal(
    shownOf(shown.show([a, routeStatus("b", "True")], day(5)), "b"),
    "True@2026-01-05T00:00:00Z",
  );
});

Deno.test("shown statuses: a status object back after a change is merged over the change", () => {
  const shown = new ShownStatuses();
  const a = routeStatus("a", "True");
  shown.show([a], day(1));
  assert.equal(
    shownOf(shown.show([routeStatus("a", "False")], day(2)), "a"),
    "False@2026-01-02T00:00:00Z",
  );
  // The first status object itself: not what was shown on day 1, a flip back stamped now.
  assert.equal(shownOf(shown.show([a], day(3)), "a"), "True@2026-01-03T00:00:00Z");
});

Deno.test("shown statuses: many objects gone over many revisions; the survivors keep their times", () => {
  const shown = new ShownStatuses();
  const keep = routeStatus("keep", "True");
  shown.show([keep], day(1));
  // 200 revisions with a different short-lived object each: the index is pruned on the way.
  for (let i = 0; i < 200; i++) shown.show([keep, routeStatus(`gone-${i}`, "True")], day(2));
  const last = shown.show([routeStatus("keep", "True"), routeStatus("gone-0", "False")], day(3));
  assert.equal(shownOf(last, "keep"), "True@2026-01-01T00:00:00Z");
  assert.equal(shownOf(last, "gone-0"), "False@2026-01-03T00:00:00Z");
  assert.deepEqual(shown.current, last);
});
