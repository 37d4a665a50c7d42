/** AdmissionReview handling: a Pod CREATE is patched; anything else is allowed, never refused. */
import assert from "node:assert/strict";
import { reviewPod } from "./review.ts";

const OPTS = { ndots: 2, excludedNamespaces: ["kube-system"] };

function review(request: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request };
}

const podCreate = (extra: Record<string, unknown> = {}) =>
  review({
    uid: "u-1",
    kind: { group: "", version: "v1", kind: "Pod" },
    operation: "CREATE",
    namespace: "shop",
    object: { apiVersion: "v1", kind: "Pod", spec: { containers: [] } },
    ...extra,
  });

// deno-lint-ignore no-explicit-any
const response = (a: { review: Record<string, unknown> }): any => a.review.response;

Deno.test("review: a Pod CREATE answers allowed with the base64 JSONPatch and the uid", () => {
  const a = reviewPod(podCreate(), OPTS);
  assert.equal(a.result, "mutated");
  assert.equal(a.review.apiVersion, "admission.k8s.io/v1");
  assert.equal(a.review.kind, "AdmissionReview");
  const r = response(a);
  assert.equal(r.uid, "u-1");
  assert.equal(r.allowed, true);
  assert.equal(r.patchType, "JSONPatch");
  assert.deepEqual(JSON.parse(atob(r.patch)), [
    { op: "add", path: "/spec/dnsConfig", value: { options: [{ name: "ndots", value: "2" }] } },
  ]);
  assert.equal(r.warnings, undefined);
});

Deno.test("review: skips are allowed unchanged without a warning", () => {
  const skips = [
    podCreate({ operation: "UPDATE" }),
    podCreate({ kind: { group: "", version: "v1", kind: "Service" } }),
    podCreate({ kind: { group: "apps", version: "v1", kind: "Pod" } }),
    podCreate({ subResource: "ephemeralcontainers" }),
    podCreate({ namespace: "kube-system" }),
    podCreate({ object: { spec: { dnsPolicy: "Default" } } }),
  ];
  for (const body of skips) {
    const a = reviewPod(body, OPTS);
    assert.equal(a.result, "skipped", a.reason);
    const r = response(a);
    assert.deepEqual([r.uid, r.allowed, r.patch, r.warnings], ["u-1", true, undefined, undefined]);
  }
});

Deno.test("review: bad input is an allowed review with a warning, never a throw", () => {
  const bad: unknown[] = [
    undefined,
    null,
    "not json at all",
    42,
    [],
    {},
    { apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: { uid: "u-1" } },
    review({}),
    review({ uid: 7 }),
    podCreate({ object: null }),
    podCreate({ object: { spec: { dnsConfig: "x" } } }),
    podCreate({ object: { spec: { dnsConfig: { options: 3 } } } }),
  ];
  for (const body of bad) {
    const a = reviewPod(body, OPTS);
    assert.equal(a.result, "invalid", JSON.stringify(body));
    const r = response(a);
    assert.equal(r.allowed, true);
    assert.equal(r.patch, undefined);
    assert.match(r.warnings[0], /^aether pod-ndots webhook: .+; admitted unchanged$/);
  }
  assert.equal(response(reviewPod(podCreate({ object: null }), OPTS)).uid, "u-1", "uid kept");
});
