/**
 * The SPIRE registrar: one SPIRE registration entry per Kubernetes ServiceAccount
 * (`spiffe://<td>/ns/<ns>/sa/<sa>`, selectors `k8s:ns:<ns>` + `k8s:sa:<sa>`) under one node alias
 * for the cluster's agents, kept on spire-server's private Entry API socket. Runs as
 * `controller spire-registrar` beside spire-server.
 *
 * ```ts
 * import { desiredEntries, planEntries } from "./mod.ts";
 * const want = desiredEntries({
 *   trustDomain: "cluster.local",
 *   clusterName: "aether",
 *   svidTtlSeconds: 3600,
 *   serviceAccounts: [{ namespace: "shop", name: "web" }],
 * });
 * console.log(planEntries(want, []).create.length); // 2: the alias and shop/web
 * ```
 * @module
 */
export {
  type ActualEntry,
  clusterAliasId,
  desiredEntries,
  type EntryPlan,
  type EntrySpec,
  OWNER_HINT,
  planEntries,
  planIsEmpty,
  serverId,
  serviceAccountId,
  type ServiceAccountRef,
} from "./entries.ts";
export {
  type CreateOutcome,
  type DeleteOutcome,
  type EntryStore,
  SpireApiError,
  SpireEntryClient,
  type SpireEntryClientOptions,
} from "./client.ts";
export {
  type PassResult,
  Registrar,
  type RegistrarOptions,
  type RegistrarReadiness,
  type Timers,
} from "./registrar.ts";
export { ServiceAccountWatch, type ServiceAccountWatchOptions } from "./service_accounts.ts";
export { parseDurationSeconds, registrarDefaults, run } from "./main.ts";
