/**
 * Status writes: a JSON merge patch of `/status` carrying the resourceVersion the status was
 * computed from, so a write based on a stale read fails with 409 instead of overwriting what
 * changed meanwhile (another controller's `parents[]` entry, a newer generation).
 * @module
 */
import type { KubeClient } from "./client.ts";
import { apiVersionOf, kindSpec, objectPath } from "./kinds.ts";

/** The object a status is written to. */
export interface StatusTarget {
  kind: string;
  apiVersion: string;
  namespace?: string;
  name: string;
  /** The resourceVersion the new status was computed from. */
  resourceVersion: string;
}

/** What a status write did. */
export type PatchResult =
  | { outcome: "written"; status: unknown; resourceVersion: string }
  | { outcome: "conflict" | "gone" }
  /** The API server's priority and fairness turned it away (429): try again after the wait. */
  | { outcome: "throttled"; retryAfterMs: number }
  | { outcome: "error"; message: string };

/** Writes `status` to the target's `/status` subresource. */
export async function patchStatus(
  client: KubeClient,
  target: StatusTarget,
  status: unknown,
): Promise<PatchResult> {
  const spec = kindSpec(target.kind);
  const version = target.apiVersion.includes("/")
    ? target.apiVersion.split("/")[1]
    : target.apiVersion;
  if (apiVersionOf(spec.group, version) !== target.apiVersion) {
    return { outcome: "error", message: `${target.apiVersion} is not a version of ${target.kind}` };
  }
  const path = objectPath(spec, version, target.namespace, target.name, true);
  // A merge patch replaces lists whole: `status` must hold every entry (others' parents too).
  const res = await client.request("PATCH", path, {
    metadata: { resourceVersion: target.resourceVersion },
    status,
  });
  if (res.status === 200) {
    return {
      outcome: "written",
      status: res.json?.status,
      resourceVersion: String(res.json?.metadata?.resourceVersion ?? ""),
    };
  }
  if (res.status === 409) return { outcome: "conflict" };
  if (res.status === 404) return { outcome: "gone" };
  if (res.status === 429) {
    const seconds = Number(res.json?.details?.retryAfterSeconds);
    return { outcome: "throttled", retryAfterMs: seconds > 0 ? seconds * 1000 : 1000 };
  }
  return {
    outcome: "error",
    message: `PATCH ${path}: HTTP ${res.status}: ${
      res.json?.message ?? String(res.json).slice(0, 200)
    }`,
  };
}
