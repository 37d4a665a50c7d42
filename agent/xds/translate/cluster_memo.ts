/**
 * Clusters and ClusterLoadAssignments remembered between translations of one stream of IRs.
 * resolve makes new IRCluster objects every time (a cluster's protocol is settled while routes are
 * converted), but keeps an unchanged cluster's fields and its `endpoints` array; so a cluster is
 * translated again only when a field that translation reads changed, and a ClusterLoadAssignment
 * only when its endpoints array is a new one. Unchanged resources come out as the same objects,
 * which the pipeline's ResourceReuse and the snapshot's encodings then skip by identity instead of
 * comparing and encoding them again. The remembered resources are shared: read-only.
 * @module
 */
import type { IRCluster, IREndpoint } from "../../../lib/ir/mod.ts";
import { IdentityMemo, type MemoStats, sameItems } from "../../../lib/memo/mod.ts";
import {
  cluster,
  type ClusterOptions,
  type ClusterParts,
  clusterParts,
  clusterPartsKey,
} from "./cluster.ts";
import { loadAssignment } from "./endpoint.ts";
import type { NamedResource } from "./types.ts";

interface ClusterEntry {
  key: string;
  c: IRCluster;
  opts: ClusterOptions;
  out: NamedResource;
}

/** The fields of an IRCluster and the options cluster() reads, compared (identities by item). */
function sameClusterInputs(a: ClusterEntry, c: IRCluster, opts: ClusterOptions): boolean {
  const x = a.c;
  return x.name === c.name && x.protocol === c.protocol && x.port === c.port &&
    x.plaintextAllowed === c.plaintextAllowed &&
    x.outsideMeshEndpoints === c.outsideMeshEndpoints &&
    (x.identities === c.identities ||
      (x.identities !== undefined && c.identities !== undefined &&
        sameItems(x.identities, c.identities))) &&
    a.opts.connectTimeoutMs === opts.connectTimeoutMs && a.opts.name === opts.name &&
    a.opts.mtls?.callerId === opts.mtls?.callerId &&
    a.opts.mtls?.trustDomain === opts.mtls?.trustDomain;
}

/**
 * One translator's remembered clusters (last translation's, in the order it asked for them) and
 * load assignments. A cluster is compared with the one asked for at the same position last time
 * first (an edit keeps the cluster list as it was); only when that one has another name is a
 * name index of the last translation's clusters built.
 */
export class ClusterMemo {
  #last: ClusterEntry[] = [];
  #byKey?: Map<string, ClusterEntry>;
  #next: ClusterEntry[] = [];
  readonly endpoints = new IdentityMemo<IREndpoint[], NamedResource>();
  /** The parts clusters of one protocol and options share (cluster.ts), by their key. */
  readonly #parts = new Map<string, ClusterParts>();
  /** Clusters given as last time (hits) and translated (misses). */
  readonly #clusters: MemoStats = { hits: 0, misses: 0 };
  /** Clusters found at their position of last time (hits) or by name (misses). */
  readonly #positions: MemoStats = { hits: 0, misses: 0 };

  /** `cluster(c, opts)`, or the same resource as last time when what it reads is unchanged. */
  cluster(c: IRCluster, opts: ClusterOptions): NamedResource {
    const key = opts.name ?? c.name;
    let seen: ClusterEntry | undefined = this.#last[this.#next.length];
    if (seen?.key === key) this.#positions.hits++;
    else {
      this.#positions.misses++;
      seen = (this.#byKey ??= new Map(this.#last.map((e) => [e.key, e]))).get(key);
    }
    const hit = seen !== undefined && sameClusterInputs(seen, c, opts);
    if (hit) this.#clusters.hits++;
    else this.#clusters.misses++;
    const entry = hit
      ? seen!
      : { key, c, opts: { ...opts }, out: cluster(c, opts, this.#partsOf(c, opts)) };
    this.#next.push(entry);
    return entry.out;
  }

  /** The shared parts of `c`'s cluster with `opts`. */
  #partsOf(c: IRCluster, opts: ClusterOptions): ClusterParts {
    const key = clusterPartsKey(c, opts);
    let parts = this.#parts.get(key);
    if (!parts) this.#parts.set(key, parts = clusterParts(c, opts));
    return parts;
  }

  /** Hits and misses of the look-up by position (else by name). */
  positionStats(): MemoStats {
    return { ...this.#positions };
  }

  /** Hits and misses of {@link cluster}. */
  clusterStats(): MemoStats {
    return { ...this.#clusters };
  }

  /** `loadAssignment(c)`, the same resource while `c.endpoints` is the same array and name. */
  loadAssignment(c: IRCluster): NamedResource {
    const seen = this.endpoints.peek(c.endpoints);
    const hit = seen?.name === c.name;
    this.endpoints.count(hit);
    if (hit) return seen!;
    const out = loadAssignment(c);
    this.endpoints.set(c.endpoints, out);
    return out;
  }

  /** Ends one translation: only the clusters it asked for are remembered for the next. */
  settle(): void {
    this.#last = this.#next;
    this.#next = [];
    this.#byKey = undefined;
  }
}
