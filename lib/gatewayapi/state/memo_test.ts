/**
 * resolve's memos (one ResolveState) (admission per object, conversion, attachment and status per route, keys,
 * cluster names and route-less mesh Services per object) are invisible: resolving objects
 * it has seen before, or a mix of seen and edited ones, gives exactly what a cold resolve of
 * fresh copies gives.
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { fileURLToPath } from "node:url";
import { readYamlDocsStrict } from "../../../testbed/golden.ts";
import { CelRules } from "../admission/mod.ts";
import { resolve, type ResolveOptions } from "../resolve.ts";
import { ResolveState } from "./mod.ts";
import type { KubeObject } from "../types.ts";

const dir = new URL("../testdata/", import.meta.url);
const text = (v: unknown) => stringify(v, { aliasDuplicateObjects: false, lineWidth: 0 });
/** The CEL library, loaded once: some cases reach rules without a hand predicate. */
const cel = await new CelRules().load();
const fresh = (objects: KubeObject[]) =>
  text(resolve(structuredClone(objects), {}, new ResolveState(cel)));

/** A resolve function with its own state: every call after the first reuses its memos. */
function warmResolve() {
  const state = new ResolveState(cel);
  return (objects: KubeObject[], options?: ResolveOptions) => resolve(objects, options, state);
}

/** Every golden input file name. */
const cases = () =>
  [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".in.yaml")).sort();

function load(file: string): KubeObject[] {
  return readYamlDocsStrict(fileURLToPath(new URL(file, dir))) as KubeObject[];
}

Deno.test("memo: a repeated resolve of the same objects equals a cold one", async (t) => {
  for (const file of cases()) {
    await t.step(file, () => {
      const warm = warmResolve();
      const objects = load(file);
      warm(objects);
      assert.equal(text(warm(objects)), fresh(objects));
    });
  }
});

/** Kinds whose objects each memo test drops and brings back. */
const EDITED = [
  "HTTPRoute",
  "GRPCRoute",
  "Service",
  "ReferenceGrant",
  "EndpointSlice",
  "Gateway",
  "GatewayClass",
  "Namespace",
  "Secret",
];

Deno.test("memo: edits to routes, Gateways, Namespaces, Services and grants are seen", async (t) => {
  for (const file of cases()) {
    await t.step(file, () => {
      const warm = warmResolve();
      const objects = load(file);
      warm(objects);
      for (const kind of EDITED) {
        const at = objects.findIndex((o) => o.kind === kind);
        if (at < 0) continue;
        // Drop the object, then bring back a copy: each step against a cold resolve.
        const without = objects.filter((_, i) => i !== at);
        assert.equal(text(warm(without)), fresh(without), `${kind} removed`);
        const back = [...without.slice(0, at), structuredClone(objects[at]), ...without.slice(at)];
        assert.equal(text(warm(back)), fresh(back), `${kind} re-added`);
      }
    });
  }
});

Deno.test("memo: relabelling a Namespace re-attaches the routes selecting it", async (t) => {
  for (const file of cases()) {
    const objects = load(file);
    const at = objects.findIndex((o) => o.kind === "Namespace" && o.metadata.labels);
    if (at < 0) continue;
    await t.step(file, () => {
      const warm = warmResolve();
      warm(objects);
      const relabelled = objects.with(at, {
        ...objects[at],
        metadata: { ...objects[at].metadata, labels: { relabelled: "yes" } },
      });
      assert.equal(text(warm(relabelled)), fresh(relabelled));
      assert.equal(text(warm(objects)), fresh(objects));
    });
  }
});

Deno.test("memo: a resolve at another time restamps every status", async (t) => {
  for (const file of cases()) {
    await t.step(file, () => {
      const warm = warmResolve();
      const objects = load(file);
      const now = "2026-01-02T03:04:05Z";
      const later = text(warm(structuredClone(objects), { now }));
      warm(objects);
      assert.equal(text(warm(objects, { now })), later);
    });
  }
});

Deno.test("memo: another mesh domain renames every cluster and mesh Service", async (t) => {
  for (const file of cases()) {
    await t.step(file, () => {
      const warm = warmResolve();
      const objects = load(file);
      const meshDomain = "other.internal";
      const other = text(warm(structuredClone(objects), { meshDomain }));
      warm(objects);
      assert.equal(text(warm(objects, { meshDomain })), other);
    });
  }
});
