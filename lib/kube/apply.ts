/**
 * Objects the controller owns (the per-Gateway edge Deployment and Service): server-side apply
 * with aether's field manager (only the fields it sets are its own), and delete.
 * @module
 */
import type { KubeClient } from "./client.ts";
import { errorOf } from "./client.ts";
import { type KindSpec, objectPath } from "./kinds.ts";

/** The kinds the controller applies, beyond those it reads. */
export const OWNED_KINDS: Record<string, KindSpec> = {
  Deployment: {
    kind: "Deployment",
    group: "apps",
    versions: ["v1"],
    plural: "deployments",
    namespaced: true,
    crd: false,
  },
  Service: {
    kind: "Service",
    group: "",
    versions: ["v1"],
    plural: "services",
    namespaced: true,
    crd: false,
  },
};

/** A manifest to apply. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}

function pathOf(kind: string, namespace: string | undefined, name: string): string {
  const spec = OWNED_KINDS[kind];
  if (!spec) throw new Error(`the controller does not apply ${kind}`);
  return objectPath(spec, spec.versions[0], namespace, name);
}

/** Server-side apply of `obj` as `fieldManager` (conflicts forced: these objects are ours). */
export async function applyObject(
  client: KubeClient,
  obj: Manifest,
  fieldManager: string,
): Promise<void> {
  const path = pathOf(obj.kind, obj.metadata.namespace, obj.metadata.name);
  const q = new URLSearchParams({ fieldManager, force: "true" });
  const res = await client.request("PATCH", `${path}?${q}`, obj, "application/apply-patch+yaml");
  if (res.status !== 200 && res.status !== 201) throw errorOf(res, `applying ${obj.kind} ${path}`);
}

/** Deletes an object; absent is fine. */
export async function deleteObject(
  client: KubeClient,
  kind: string,
  namespace: string,
  name: string,
): Promise<void> {
  const path = pathOf(kind, namespace, name);
  const res = await client.request("DELETE", path);
  if (res.status !== 200 && res.status !== 202 && res.status !== 404) {
    throw errorOf(res, `deleting ${kind} ${path}`);
  }
}
