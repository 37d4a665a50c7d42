/**
 * ShownStatuses keeps its state position by position from one revision to the next: an
 * unchanged status is shown as it was without a look-up, and what a changed status is merged over
 * is always what its object showed in the revision before, never an older leftover (an object
 * that went and came back starts afresh).
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

Deno.test("shown statuses: an edit among 1,000 looks up and merges only the edited one; a shift by one none more", () => {
  const shown = new ShownStatuses();
  const given = Array.from({ length: 1000 }, (_, i) => routeStatus(`r-${i}`, "True"));
  const first = shown.show(given, day(1));
  // Every status recomputed as a new wrapper around the same status object, as resolve does.
  const rewrapped = (list: ObjectStatus[]) => list.map((s) => ({ ...s }));
  const before = shown.stats();
  const edited = rewrapped(given).with(500, routeStatus("r-500", "False"));
  const second = shown.show(edited, day(2));
  const after = shown.stats();
  assert.equal(after.misses - before.misses, 1, "only the edited status looked up");
  assert.equal(after.hits - before.hits, 999, "the rest shown as at their position");
  assert.ok(second.every((s, i) => i === 500 || s === first[i]));
  assert.equal(shownOf(second, "r-500"), "False@2026-01-02T00:00:00Z");
  assert.equal(shownOf(second, "r-499"), "True@2026-01-01T00:00:00Z");

  // One status removed: the rest found one position over, still shown as they were.
  const third = shown.show(edited.toSpliced(10, 1), day(3));
  const end = shown.stats();
  assert.equal(third.length, 999);
  assert.ok(third.every((s, i) => s === second[i < 10 ? i : i + 1]));
  assert.equal(end.misses - after.misses, 1, "only the first status after the gap looked up");
});

Deno.test("shown statuses: one status inserted among 1,000 is merged as new without a key index; a move far builds one", () => {
  const shown = new ShownStatuses();
  const given = Array.from({ length: 1000 }, (_, i) => routeStatus(`r-${i}`, "True"));
  const first = shown.show(given, day(1));
  const added = given.toSpliced(300, 0, routeStatus("new", "True"));
  const second = shown.show(added, day(2));
  assert.equal(shown.indexesBuilt, 0, "every earlier status found by position: the new one is new");
  assert.ok(second.every((s, i) => i === 300 || s === first[i < 300 ? i : i - 1]));
  assert.equal(shownOf(second, "new"), "True@2026-01-02T00:00:00Z");
  // r-0 moved to the end: not by position, found by key, its time kept.
  const moved = [...added.slice(1), { ...added[0], status: condition("True") }];
  const third = shown.show(moved, day(3));
  assert.equal(shown.indexesBuilt, 1);
  assert.equal(shownOf(third, "r-0"), "True@2026-01-01T00:00:00Z");
  // A new object and a deleted one in one revision: the deleted one was not found, so an index.
  const swapped = moved.toSpliced(5, 1, routeStatus("other", "False"));
  const fourth = shown.show(swapped, day(4));
  assert.equal(shown.indexesBuilt, 2);
  assert.equal(shownOf(fourth, "other"), "False@2026-01-04T00:00:00Z");
});
