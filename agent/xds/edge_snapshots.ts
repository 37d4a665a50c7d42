/**
 * The edge's xDS sink: each resolved revision's IR translated into Envoy resources and served as
 * one snapshot (to every Envoy, or to one node id). The twin of the node role's
 * `agent/node/snapshots.ts`. It owns what its translations and encodings remember, so an
 * unchanged route gives the very same resources and no push. Endpoint-only changes take the fast
 * path: EDS is rebuilt, routes are not translated again. A revision that fails here keeps the
 * last good snapshot serving.
 * @module
 */
import type { IR } from "../../lib/ir/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { Resolved, Sink } from "../../lib/engine/mod.ts";
import type { MemoStats } from "../../lib/memo/mod.ts";
import type { Registry } from "../../lib/metrics/mod.ts";
import { equalData } from "../../lib/data/mod.ts";
import {
  type EnvoyResources,
  type NamedResource,
  translate,
  TranslateMemo,
  type TranslateOptions,
} from "./translate/mod.ts";
import { sortedByName } from "./translate/mod.ts";
import { EncodeMetrics, Encodings, Snapshot, type SnapshotCache } from "./cache/mod.ts";
import { ResourceReuse } from "./cache/mod.ts";

/** Options of {@link EdgeSnapshots}. */
export interface EdgeSnapshotsOptions {
  cache: SnapshotCache;
  translate?: TranslateOptions;
  /** Node id to program; undefined = the cache's default snapshot (every Envoy). */
  nodeId?: string;
  /** Fills in what resolve cannot know (endpoint identities from Pods), before translate. */
  decorate?: (ir: IR, objects: readonly KubeObject[]) => IR;
  /** SDS secrets served beside the IR's own (the edge's SVID and trust bundles). */
  secrets?: () => NamedResource[];
  /**
   * Where the resources encoded and reused per type are counted
   * (`aether_xds_resources_encoded_total`, `aether_xds_resources_reused_total`).
   */
  metrics?: Registry;
}

/**
 * Whether two IRs differ at most in their clusters' endpoints (then only EDS needs rebuilding).
 * A walk that stops at the first difference: no serialization of either IR.
 */
function sameRouting(a: IR, b: IR): boolean {
  return equalData({ ...a, clusters: [] }, { ...b, clusters: [] }) &&
    equalData(a.clusters, b.clusters, (key) => key === "endpoints");
}

/** The edge's translate → xDS cache step, as an engine sink named `xds`. */
export class EdgeSnapshots implements Sink {
  readonly name = "xds";
  #lastIR?: IR;
  #lastResources?: EnvoyResources;
  readonly #reuse = new ResourceReuse();
  readonly #translateMemo = new TranslateMemo();
  readonly #encodings: Encodings;

  constructor(readonly options: EdgeSnapshotsOptions) {
    this.#encodings = new Encodings(options.metrics && new EncodeMetrics(options.metrics));
  }

  /** The IR last served. */
  get ir(): IR | undefined {
    return this.#lastIR;
  }

  apply({ input, result }: Resolved): void {
    const ir = this.options.decorate ? this.options.decorate(result.ir, input.objects) : result.ir;
    if (this.#lastIR && this.#lastResources && sameRouting(ir, this.#lastIR)) {
      // As a full translation makes them: an unchanged cluster's endpoints array (resolve keeps
      // it) gives the same ClusterLoadAssignment object, whose encoding the snapshot reuses.
      const memo = this.#translateMemo;
      const endpoints = memo.order.endpoints.sorted(ir.clusters).map((c) =>
        memo.clusters.loadAssignment(c)
      );
      // Kept with the rest, so a later secrets refresh serves these endpoints, not older ones.
      this.#lastResources = { ...this.#lastResources, endpoints };
      this.options.cache.setEndpoints(this.options.nodeId, endpoints);
    } else {
      const resources = this.#reuse.apply(
        translate(ir, this.options.translate, this.#translateMemo),
      );
      this.#lastResources = resources;
      this.#publish(resources);
    }
    this.#lastIR = ir;
  }

  /**
   * Hits and misses of this sink's memos, by name: translation (IR virtual hosts at their last
   * position, else VHDS resources by IR virtual host; on a miss, the virtual host and its VHDS
   * form; clusters, load assignments), reuse (resources at their last position, else looked up
   * by name) and encoding (resources, long-list elements; lists encoded in place over their last
   * one, else whole). A miss is work done: after a one-route edit, one virtual host translated
   * and one resource encoded, and no list encoded whole.
   */
  stats(): Record<string, MemoStats> {
    const t = this.#translateMemo, e = this.#encodings;
    return {
      translatePositions: { ...t.positions },
      translateVhds: t.vhds.stats(),
      translateVirtualHosts: t.virtualHosts.stats(),
      translateServed: t.served.stats(),
      translateClusters: t.clusters.clusterStats(),
      translateEndpoints: t.clusters.endpoints.stats(),
      encodeResources: e.resources.stats(),
      encodeElements: e.elements.stats(),
      encodeLists: { ...e.lists },
      reusePositions: this.#reuse.stats(),
    };
  }

  version(): string | undefined {
    const cache = this.options.cache;
    const id = this.options.nodeId;
    return (id === undefined ? cache.getDefaultSnapshot() : cache.getSnapshot(id))?.version;
  }

  /**
   * Serves the current `secrets` with the last translated resources: only secrets change, so
   * only SDS is pushed (an SVID rotation).
   */
  refreshSecrets(): void {
    if (this.#lastResources) this.#publish(this.#lastResources);
  }

  #publish(resources: EnvoyResources): void {
    const extra = this.options.secrets?.() ?? [];
    const all = extra.length
      ? { ...resources, secrets: sortedByName([...resources.secrets, ...extra]) }
      : resources;
    const snap = Snapshot.fromResources(all, undefined, this.#encodings);
    if (this.options.nodeId === undefined) this.options.cache.setDefaultSnapshot(snap);
    else this.options.cache.setSnapshot(this.options.nodeId, snap);
  }
}
