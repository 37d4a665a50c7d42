/**
 * ResolveState: everything one resolver remembers between resolves, in one owned object. Pass
 * the same state to every resolve of one input stream (a pipeline, a node agent, a controller)
 * and a resolve after an edit recomputes only what the edit touched; two resolvers with their own
 * states in one process (edge + node, two tests) never evict each other. No module in
 * lib/gatewayapi keeps state of its own.
 *
 * Every memo is keyed by the identity of its input objects, so the contract of the `Source`
 * interface applies: an unchanged object is handed over as the same object, and an object handed
 * over is never mutated afterwards.
 * @module
 */
import type { Admitted } from "../admission/mod.ts";
import { AttachMemo } from "./attach.ts";
import { CelRules } from "../admission/mod.ts";
import type { BackendsMemo } from "../backends.ts";
import { type ConvertContext, ConvertMemo } from "./convert.ts";
import type { MeshParentOutcome } from "../mesh/attachment.ts";
import { IdentityMemo, type MemoStats } from "../../memo/mod.ts";
import { MeshMemo } from "../mesh/build.ts";
import type { Reads } from "../reads.ts";
import type { StatusMemo } from "../route_status.ts";
import type { AgeOrderMemo } from "../object_index.ts";
import type { KubeObject } from "../types.ts";
import { VhostMemo } from "./vhost.ts";
import { LastMemo } from "./last.ts";

/** The memos of one resolver. Create one per input stream and pass it to every resolve. */
export class ResolveState {
  /**
   * `cel`: the CEL library for the rules without a hand predicate, loaded when first needed
   * (by the engine, lib/engine) or up front (`await cel.load()`); states may share one.
   */
  constructor(readonly cel: CelRules = new CelRules()) {}

  /** Admission (defaults, schema, CEL) by input object. */
  readonly admitted = new IdentityMemo<KubeObject, Admitted>();
  /** The age order of the last input. */
  readonly order: AgeOrderMemo = {};
  /** Route attachment by route. */
  readonly attach = new AttachMemo();
  /**
   * Service-parent (GAMMA) attachment by route, valid while its Service lookups hold. The
   * outcomes are shared between resolves: read-only.
   */
  readonly meshAttach = new IdentityMemo<
    KubeObject,
    { context: ConvertContext; reads: Reads; parents: readonly MeshParentOutcome[] }
  >();
  /** Route conversion by route (edge and mesh side). */
  readonly convert = new ConvertMemo();
  /** Endpoints by Service and port; mesh-name owners of the last Services. */
  readonly backends: BackendsMemo = { endpoints: new IdentityMemo(), owners: {} };
  /** Rendered virtual hosts by conversion and listener/domain. */
  readonly vhosts = new VhostMemo();
  /** Route statuses by route. */
  readonly statuses: StatusMemo = new IdentityMemo();
  /** Sorted owners and route-less MeshServices. */
  readonly mesh = new MeshMemo();
  /** The last resolve, which the edit path (edit.ts) resolves an edit on. */
  readonly last = new LastMemo();

  /** Hits and misses of every memo, by name. */
  stats(): Record<string, MemoStats> {
    return {
      admit: this.admitted.stats(),
      attach: this.attach.routes.stats(),
      meshAttach: this.meshAttach.stats(),
      convertEdge: this.convert.edge.stats(),
      convertMesh: this.convert.mesh.stats(),
      endpoints: this.backends.endpoints.stats(),
      vhosts: this.vhosts.byConversion.stats(),
      statuses: this.statuses.stats(),
      meshOwners: this.mesh.sortedOwners.stats(),
      meshRouteless: this.mesh.routeless.stats(),
      meshPorts: this.mesh.ports.stats(),
      meshServices: this.mesh.services.stats(),
    };
  }
}
export { type VhostInput, VhostMemo, type VhostSite } from "./vhost.ts";
export { idOf, type LastIndex, LastMemo, type LastResolve, type LastRoute } from "./last.ts";
export type { RouteConverter } from "./convert.ts";
