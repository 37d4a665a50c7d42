/**
 * Several sources as one: each keeps its own partition, named by its origin (`files`, `kube`, a
 * registry's `<region>/<cluster>`), and every revision of any of them is delivered as one merged
 * revision. Objects pass through as the very same objects (the Source contract holds). Keys are
 * partitioned by origin: two partitions holding an object of the same kind, namespace and name
 * keep the first listed partition's, and the other is reported as a problem rather than served.
 * @module
 */
import {
  objectKey,
  type Source,
  type SourceObject,
  type SourceProblem,
  type SourceRevision,
  type StaleFile,
} from "../source/mod.ts";

/** One partition of a {@link MergedSource}. */
export interface Partition {
  /** Unique among the partitions; prefixes the partition's origins (`<origin>:<its origin>`). */
  origin: string;
  source: Source;
}

/** Delivers the partitions' revisions merged, once every partition has delivered its first. */
export class MergedSource implements Source {
  readonly #latest = new Map<string, SourceRevision>();
  #revision = 0;
  #listener?: (revision: SourceRevision) => void;
  #kinds?: readonly string[];

  constructor(readonly partitions: readonly Partition[]) {
    const origins = partitions.map((p) => p.origin);
    const twice = origins.find((o, i) => origins.indexOf(o) !== i);
    if (twice) throw new Error(`two partitions have the origin ${twice}`);
  }

  async start(onRevision: (revision: SourceRevision) => void): Promise<void> {
    await Promise.all(this.partitions.map((p) =>
      p.source.start((r) => {
        this.#latest.set(p.origin, r);
        this.#emit();
      })
    ));
    // Only now is every partition's first revision in: deliver one whole revision.
    this.#listener = onRevision;
    this.#emit();
  }

  async stop(): Promise<void> {
    this.#listener = undefined;
    await Promise.all(this.partitions.map((p) => p.source.stop()));
  }

  #emit(): void {
    if (!this.#listener) return;
    const merged = mergeRevisions(
      ++this.#revision,
      this.partitions.map((p) => [p.origin, this.#latest.get(p.origin)!] as const),
    );
    // The same kinds as last time are handed over as the same array (consumers key on it).
    if (merged.kinds && merged.kinds.join("\n") === this.#kinds?.join("\n")) {
      merged.kinds = this.#kinds;
    }
    this.#kinds = merged.kinds;
    this.#listener(merged);
  }
}

/**
 * Pure: one revision from each partition's latest, in partition order. Kinds: every kind a
 * partition can deliver (a partition that can deliver every kind makes it every kind). Admitted
 * only when every partition's objects are.
 */
export function mergeRevisions(
  revision: number,
  parts: readonly (readonly [string, SourceRevision])[],
): SourceRevision {
  const objects: SourceObject[] = [];
  const problems: SourceProblem[] = [];
  const origins = new Map<string, string>();
  const stale: StaleFile[] = [];
  const owner = new Map<string, string>();
  let kinds: Set<string> | undefined = new Set();
  let admitted = true;
  for (const [origin, r] of parts) {
    for (const o of r.objects) {
      const key = objectKey(o);
      const first = owner.get(key);
      if (first !== undefined) {
        problems.push({
          kind: o.kind,
          namespace: o.metadata.namespace,
          name: o.metadata.name,
          field: "metadata.name",
          message: `also defined by ${first}; the one from ${first} is served, not this one`,
          source: `${origin}:${r.origins.get(key) ?? ""}`,
        });
        continue;
      }
      owner.set(key, origin);
      objects.push(o);
      const from = r.origins.get(key);
      origins.set(key, from === undefined ? origin : `${origin}:${from}`);
    }
    problems.push(...r.problems.map((p) => ({ ...p, source: `${origin}:${p.source}` })));
    stale.push(...(r.stale ?? []).map((s) => ({ ...s, source: `${origin}:${s.source}` })));
    if (r.kinds === undefined) kinds = undefined;
    else if (kinds) { for (const k of r.kinds) kinds.add(k); }
    admitted &&= r.admitted === true;
  }
  return {
    revision,
    objects,
    problems,
    origins,
    ...(stale.length ? { stale } : {}),
    ...(kinds ? { kinds: [...kinds].sort() } : {}),
    ...(admitted && parts.length ? { admitted } : {}),
  };
}
