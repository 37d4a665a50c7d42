/**
 * The only code that talks to the Kubernetes API server: connection (kubeconfig or in-cluster),
 * list+watch with informer semantics, the `KubeSource` source, the leader Lease and
 * status writes.
 *
 * ```ts
 * import { defaultKinds, KubeClient, KubeSource } from "./mod.ts";
 * import { ROUTE_KINDS } from "../gatewayapi/mod.ts";
 * const client = new KubeClient({ kubeconfig: "kubeconfig" });
 * const source = new KubeSource({ client, kinds: defaultKinds(ROUTE_KINDS) });
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
export { KubeSource, type KubeSourceOptions } from "./source.ts";
export { controllerKinds, defaultKinds, type KindSpec, kindSpec, objectPath } from "./kinds.ts";
export { type Backoff, Reflector } from "./reflector.ts";
export { LeaderElector, type LeaseOptions, microTime } from "./lease.ts";
export { type PatchResult, patchStatus, type StatusTarget } from "./status_patch.ts";
export { applyObject, deleteObject, type Manifest, OWNED_KINDS } from "./apply.ts";
export { collectionPath, crdName, kindSpecs, servedVersion } from "./kinds.ts";
