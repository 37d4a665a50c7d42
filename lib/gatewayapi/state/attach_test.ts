/**
 * Remembered attachment outcomes are shared, not copied: a hit is the very outcomes of the miss,
 * and resolve never changes them (it settles conflicts and refuses unsupported routes into new
 * values), so resolves whose memos freeze every outcome they make give cold resolves' results.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readYamlDocsStrict } from "../../../testbed/golden.ts";
import { CelRules } from "../admission/mod.ts";
import type { ParentOutcome } from "../attachment.ts";
import { resolve } from "../resolve.ts";
import { AttachMemo } from "./attach.ts";
import { IdentityMemo } from "../../memo/mod.ts";
import { ResolveState } from "./mod.ts";
import type { Obj } from "../object_index.ts";
import type { KubeObject, RouteSpecCommon } from "../types.ts";

const dir = new URL("../testdata/", import.meta.url);
const cel = await new CelRules().load();

/** Freezes an outcome and what it holds of its own (not the Services and ports it names). */
function freeze(outcome: object) {
  Object.freeze(outcome);
  for (const v of Object.values(outcome)) {
    if (Array.isArray(v)) {
      Object.freeze(v);
      // Attachments (and their hostnames); a mesh outcome's ports are the Service's own.
      for (const a of v) if ("listenerId" in a) Object.freeze(Object.freeze(a).hostnames);
    } else if (v && typeof v === "object" && !("apiVersion" in v)) Object.freeze(v);
  }
}

Deno.test("attach memo: a hit is the remembered outcomes themselves", () => {
  const memo = new AttachMemo();
  const context = memo.context([], new Map());
  const route = { metadata: { name: "r", namespace: "ns" }, spec: {} } as Obj<RouteSpecCommon>;
  const made: ParentOutcome[] = [{
    parentRef: { name: "gw" },
    accepted: { ok: true, reason: "Accepted", message: "" },
    attachments: [{ listenerId: "ns/gw/http", hostnames: ["*"] }],
  }];
  const first = memo.attach(context, "HTTPRoute", route, () => made);
  const again = memo.attach(context, "HTTPRoute", route, () => assert.fail("attached again"));
  assert.equal(first, made);
  assert.equal(again, made, "no copy on a hit");
  assert.deepEqual(memo.routes.stats(), { hits: 1, misses: 1 });
});

/** Inputs with kind conflicts, L4 conflicts, unsupported edge and mesh routes: settled anew. */
const SETTLED = [
  "grpc_route.in.yaml",
  "l4_routes.in.yaml",
  "regex_unsupported.in.yaml",
  "mesh_ports_and_parents.in.yaml",
];

/** An IdentityMemo that freezes the outcomes of each value as it is made. */
class FreezingMemo<K extends object, V extends { parents: readonly object[] }>
  extends IdentityMemo<K, V> {
  override get(key: K, make: () => V, valid?: (value: V) => boolean): V {
    return super.get(key, () => {
      const value = make();
      value.parents.forEach(freeze);
      return value;
    }, valid);
  }
}

/** A state whose attachment memos (edge and mesh) freeze every outcome they remember. */
function freezingState(): ResolveState {
  const state = new ResolveState(cel);
  Object.defineProperty(state.attach, "routes", { value: new FreezingMemo() });
  Object.defineProperty(state, "meshAttach", { value: new FreezingMemo() });
  return state;
}

Deno.test("attach memo: resolve never changes remembered outcomes", async (t) => {
  const files = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".in.yaml"))
    .sort();
  const cold = (objects: KubeObject[]) =>
    resolve(structuredClone(objects), {}, new ResolveState(cel));
  for (const file of files) {
    await t.step(file, () => {
      const objects = readYamlDocsStrict(fileURLToPath(new URL(file, dir))) as KubeObject[];
      // A change to a frozen outcome throws (modules are strict).
      const state = freezingState();
      assert.deepEqual(resolve(objects, {}, state), cold(objects));
      // Each route dropped, then back: the others' remembered outcomes settle against other
      // rivals, and none stays settled.
      objects.forEach((o, at) => {
        if (!o.kind.endsWith("Route")) return;
        const without = objects.filter((_, i) => i !== at);
        assert.deepEqual(resolve(without, {}, state), cold(without), `${o.kind} ${at} dropped`);
        assert.deepEqual(resolve(objects, {}, state), cold(objects), `${o.kind} ${at} back`);
      });
      const { attach, meshAttach } = state.stats();
      assert.ok(attach.hits + meshAttach.hits > 0 || !SETTLED.includes(file), "memos were hit");
    });
  }
});
