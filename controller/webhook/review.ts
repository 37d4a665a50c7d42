/**
 * AdmissionReview v1 in, AdmissionReview v1 out — pure. A Pod CREATE gets the ndots JSONPatch
 * (ndots.ts); anything else is allowed unchanged. Input that is not a review the webhook expects
 * (not JSON, another apiVersion, no uid, no pod) is still answered with an *allowed* review that
 * carries a warning: a webhook must never be the reason a pod is not created.
 * @module
 */
import { type NdotsOptions, podNdotsPatch } from "./ndots.ts";

/** How one review was answered (the `result` label of the reviews metric). */
export type ReviewResult = "mutated" | "skipped" | "invalid";

/** An answered review. */
export interface Answered {
  /** The AdmissionReview to send back. */
  review: Record<string, unknown>;
  result: ReviewResult;
  /** Why: the skip or the problem; "" when mutated. */
  reason: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const WARNING = "aether pod-ndots webhook";

function answer(
  uid: string,
  result: ReviewResult,
  reason: string,
  patch?: unknown,
): Answered {
  const response: Record<string, unknown> = { uid, allowed: true };
  if (patch !== undefined) {
    response.patchType = "JSONPatch";
    response.patch = btoa(JSON.stringify(patch));
  }
  if (result === "invalid") response.warnings = [`${WARNING}: ${reason}; admitted unchanged`];
  return {
    review: { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response },
    result,
    reason,
  };
}

/** Answers one AdmissionReview body (already parsed JSON, or the text that did not parse). */
export function reviewPod(body: unknown, opts: NdotsOptions): Answered {
  if (!isObject(body)) return answer("", "invalid", "the body is not an AdmissionReview object");
  const request = body.request;
  const uid = isObject(request) && typeof request.uid === "string" ? request.uid : "";
  if (body.apiVersion !== "admission.k8s.io/v1" || body.kind !== "AdmissionReview") {
    return answer(uid, "invalid", `not an admission.k8s.io/v1 AdmissionReview`);
  }
  if (!isObject(request) || !uid) return answer(uid, "invalid", "the review has no request uid");
  const kind = request.kind;
  if (!isObject(kind) || kind.group !== "" || kind.kind !== "Pod") {
    return answer(uid, "skipped", "not a Pod");
  }
  if (request.operation !== "CREATE") return answer(uid, "skipped", "not a CREATE");
  if (typeof request.subResource === "string" && request.subResource) {
    return answer(uid, "skipped", "a subresource");
  }
  const namespace = typeof request.namespace === "string" ? request.namespace : "";
  const decision = podNdotsPatch(request.object, namespace, opts);
  if ("patch" in decision) return answer(uid, "mutated", "", decision.patch);
  if ("skip" in decision) return answer(uid, "skipped", decision.skip);
  return answer(uid, "invalid", decision.invalid);
}
