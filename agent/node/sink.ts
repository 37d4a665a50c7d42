/**
 * The node role's xDS sink: from each resolved revision, this node's pods and the MeshIR (with
 * each pod's SPIFFE identity when SPIRE is on) go to the demand-scoped per-node snapshots, and the
 * identities this node's pods need go to the SPIRE subscription.
 * @module
 */
import type { Resolved, Sink } from "../../lib/engine/mod.ts";
import {
  IdentityDecorations,
  type IdentityScheme,
  outsideMeshPods,
  plaintextServices,
  podIdentities,
  wantedIdentities,
  withIdentities,
} from "../identity/mod.ts";
import { podsOnNode } from "../../lib/gatewayapi/mod.ts";
import { equalData } from "../../lib/data/mod.ts";
import type { NodePod } from "../../lib/ir/mod.ts";
import type { NodeSnapshots } from "./snapshots.ts";

/** Options of {@link NodeMeshSink}. */
export interface NodeMeshSinkOptions {
  nodeName: string;
  snapshots: NodeSnapshots;
  /** With SPIRE: how pods map to SPIFFE IDs, and where the wanted identities go. */
  identity?: {
    scheme: IdentityScheme;
    /** Sets the identities to subscribe to; returns true when the set changed. */
    setWanted(wanted: ReturnType<typeof wantedIdentities>): boolean;
    /** Called when the wanted set changed (the secrets are served again). */
    changed(): void;
  };
}

/** The node role's translate step, as an engine sink named `xds`. */
export class NodeMeshSink implements Sink {
  readonly name = "xds";
  #pods = 0;
  /** The pods of the view last set. */
  #served?: NodePod[];
  /** Keeps an unchanged cluster's decorated endpoints the same objects (see withIdentities). */
  readonly #identities = new IdentityDecorations();

  constructor(readonly options: NodeMeshSinkOptions) {}

  /** How many of the served revision's pods are on this node. */
  get pods(): number {
    return this.#pods;
  }

  apply({ input, result }: Resolved): void {
    const o = this.options;
    const mine = podsOnNode(input.objects, o.nodeName);
    const id = o.identity;
    const mesh = id
      ? withIdentities(
        result.mesh,
        podIdentities(input.objects, id.scheme),
        plaintextServices(input.objects),
        outsideMeshPods(input.objects, id.scheme),
        this.#identities,
      )
      : result.mesh;
    if (id?.setWanted(wantedIdentities(mine, id.scheme))) id.changed();
    o.snapshots.setMesh(mesh);
    // The same pods: setMesh re-translated what the change touched (EDS alone for endpoints).
    if (!this.#served || !equalData(mine, this.#served)) {
      o.snapshots.setView({ nodeId: o.nodeName, pods: mine, dependencies: [] });
      this.#served = mine;
    }
    this.#pods = mine.length;
  }

  version(): string | undefined {
    return this.options.snapshots.options.cache?.getSnapshot(this.options.nodeName)?.version;
  }
}
