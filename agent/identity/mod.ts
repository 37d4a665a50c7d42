/**
 * agent/identity: SPIFFE identities from SPIRE. The Workload API client (the agent's own SVID),
 * the Delegated Identity API client (every pod identity on the node, by selectors, one
 * subscription per identity) and the SVID/bundle helpers. See docs/identity.md.
 * @module
 */
export { WorkloadApiClient, type WorkloadUpdate, workloadUpdate } from "./workload.ts";
export { delegatedBundles, DelegatedIdentityClient, delegatedSvids } from "./delegated.ts";
export { NodeIdentities, type WantedIdentity } from "./node_identities.ts";
export {
  checkTrustDomain,
  derToPem,
  parseSpiffeId,
  type SpiffeId,
  splitDer,
  type Svid,
  type TrustBundle,
} from "./svid.ts";
export type { Selector } from "./proto.ts";
export {
  DEFAULT_ID_TEMPLATE,
  IdentityDecorations,
  type IdentityScheme,
  identityScheme,
  identitySelectors,
  outsideMesh,
  outsideMeshPods,
  PLAINTEXT_ANNOTATION,
  plaintextServices,
  podIdentities,
  spiffeIdOf,
  wantedIdentities,
  withIdentities,
} from "./mesh_identity.ts";
export { identityDecorator, startEdgeIdentity } from "./edge_identity.ts";
