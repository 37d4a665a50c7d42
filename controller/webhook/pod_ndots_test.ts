/**
 * The pod-ndots mutation against golden cases (testdata/pod_ndots.in.yaml → .out.yaml): the
 * decision for each Pod and, when it is a patch, the Pod's dnsConfig after applying it. A second
 * test applies every patch to its Pod and checks what the kubelet will read.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkGolden, goldenYaml, readYamlDocsStrict } from "../../testbed/golden.ts";
import { type JsonPatchOp, podNdotsPatch } from "./ndots.ts";

const dir = fileURLToPath(new URL("./testdata/", import.meta.url));
const OPTS = { ndots: 2, excludedNamespaces: ["kube-system", "aether-system"] };

interface Case {
  case: string;
  namespace: string;
  pod: Record<string, unknown>;
}

/** Applies `add` operations (RFC 6902: a path ending in `-` appends to a list). */
function applyPatch<T>(doc: T, patch: JsonPatchOp[]): T {
  const out = structuredClone(doc) as Record<string, unknown>;
  for (const op of patch) {
    const keys = op.path.split("/").slice(1);
    const last = keys.pop()!;
    let at: Record<string, unknown> | unknown[] = out;
    for (const k of keys) at = (at as Record<string, unknown>)[k] as Record<string, unknown>;
    if (Array.isArray(at)) {
      assert.equal(last, "-", `${op.path}: only appending to a list`);
      at.push(op.value);
    } else {
      assert.ok(at && typeof at === "object", `${op.path}: the parent exists`);
      (at as Record<string, unknown>)[last] = op.value;
    }
  }
  return out as T;
}

const cases = () => readYamlDocsStrict(join(dir, "pod_ndots.in.yaml")) as Case[];

Deno.test("pod ndots: golden decisions and patched dnsConfig", () => {
  const out = cases().map((c) => {
    const d = podNdotsPatch(c.pod, c.namespace, OPTS);
    const spec = "patch" in d
      ? applyPatch(c.pod, d.patch).spec as Record<string, unknown>
      : undefined;
    return { case: c.case, decision: d, ...(spec ? { dnsConfig: spec.dnsConfig } : {}) };
  });
  checkGolden(join(dir, "pod_ndots.out.yaml"), goldenYaml(out), "deno test -A controller/webhook");
});

Deno.test("pod ndots: every patch leaves exactly one ndots option, the pod's others kept", () => {
  let patched = 0;
  for (const c of cases()) {
    const d = podNdotsPatch(c.pod, c.namespace, OPTS);
    if (!("patch" in d)) continue;
    patched++;
    const spec = applyPatch(c.pod, d.patch).spec as { dnsConfig: { options: { name: string }[] } };
    const before = (c.pod.spec as { dnsConfig?: { options?: unknown[] } }).dnsConfig?.options ?? [];
    assert.deepEqual(spec.dnsConfig.options.filter((o) => o.name === "ndots"), [
      { name: "ndots", value: "2" },
    ], c.case);
    assert.deepEqual(spec.dnsConfig.options.slice(0, before.length), before, c.case);
  }
  assert.equal(patched, 5, "the five cases that are meant to be patched");
  assert.deepEqual(podNdotsPatch({ spec: {} }, "shop", { ...OPTS, ndots: 3 }), {
    patch: [{
      op: "add",
      path: "/spec/dnsConfig",
      value: { options: [{ name: "ndots", value: "3" }] },
    }],
  });
});
