/**
 * The only code that talks to the Kubernetes API server: connection (kubeconfig or in-cluster),
 * list+watch with informer semantics, the `KubeSource` source, the leader Lease and
 * status writes.
 *
 * ```ts
 * import { KubeClient, KubeSource } from "./mod.ts";
 * const source = new KubeSource({ client: new KubeClient({ kubeconfig: "kubeconfig" }) });
 * await source.start((revision) => console.log(revision.objects.length));
 * ```
 * @module
 */
export {
  errorOf,
  KubeClient,
  type KubeConnection,
  KubeError,
  type KubeResponse,
} from "./client.ts";
export { DEFAULT_KINDS, KubeSource, type KubeSourceOptions } from "./source.ts";
export { KIND_SPECS, type KindSpec, kindSpec, objectPath } from "./kinds.ts";
export { type Backoff, Reflector } from "./reflector.ts";
export { LeaderElector, type LeaseOptions, microTime } from "./lease.ts";
export { type PatchResult, patchStatus, type StatusTarget } from "./status_patch.ts";
export { applyObject, deleteObject, type Manifest, OWNED_KINDS } from "./apply.ts";
