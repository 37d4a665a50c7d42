/**
 * The registry's endpoint records kept from one change to the next, for an importer that hears of
 * changes origin by origin (the RegistryMirror's onChange): a changed origin's records are
 * compared with the last ones by value, only new values are parsed, and only the services they
 * belong to get their endpoint lists made again ({@link clusterSetEndpoints} over that service's
 * records). Every other service keeps its very list (the same array), so a consumer can tell an
 * unchanged service by identity. Owned by one importer: never module-level.
 * @module
 */
import { type ClusterSetEndpointEntry, clusterSetEndpoints } from "./clusterset_endpoints.ts";
import { parseEndpointRecord } from "./endpoints.ts";

const EPS = "eps/";

/** One record as last seen: its value and the `<ns>/<svc>` it names (undefined: malformed). */
interface Held {
  value: string;
  service: string | undefined;
}

/** The endpoint lists of every imported service, remade only where records changed. */
export class ClusterSetIndex {
  /** Records by origin, then key inside the origin (`eps/…` keys only). */
  readonly #records = new Map<string, Map<string, Held>>();
  /** Each service's record values, by `<origin>\u0000<key>`. */
  readonly #members = new Map<string, Map<string, string>>();
  readonly #lists = new Map<string, ClusterSetEndpointEntry[]>();
  readonly #dirty = new Set<string>();
  #skipped = 0;
  /** Record values parsed so far (a changed record once; a changed service's records again). */
  parsed = 0;

  /** `ownCluster`: this importer's cluster id (its endpoints get priority 0). */
  constructor(readonly ownCluster: string) {}

  /**
   * Takes origin `origin`'s current entries (every key of the origin; only `eps/…` ones are
   * read), or undefined when the origin left the view.
   */
  update(origin: string, entries: ReadonlyMap<string, string> | undefined): void {
    const before = this.#records.get(origin);
    const now = new Map<string, Held>();
    for (const [rel, value] of entries ?? []) {
      if (!rel.startsWith(EPS)) continue;
      const held = before?.get(rel);
      if (held?.value === value) {
        now.set(rel, held);
        continue;
      }
      if (held) this.#leave(origin, rel, held);
      now.set(rel, this.#join(origin, rel, value));
    }
    for (const [rel, held] of before ?? []) if (!now.has(rel)) this.#leave(origin, rel, held);
    if (now.size) this.#records.set(origin, now);
    else this.#records.delete(origin);
  }

  /** The origins whose records are held. */
  origins(): string[] {
    return [...this.#records.keys()];
  }

  /** Records that are not well-formed endpoint records, over every origin. */
  get skipped(): number {
    return this.#skipped;
  }

  /**
   * Every service's endpoints (sorted by cluster, then address), by `<ns>/<svc>`: the lists of
   * services whose records changed since the last call made again, the others the same arrays.
   */
  byService(): ReadonlyMap<string, ClusterSetEndpointEntry[]> {
    for (const key of this.#dirty) {
      const values = this.#members.get(key);
      const list = values &&
        clusterSetEndpoints(values.values(), this.ownCluster).byService.get(key);
      this.parsed += values?.size ?? 0;
      if (list) this.#lists.set(key, list);
      else this.#lists.delete(key);
    }
    this.#dirty.clear();
    return this.#lists;
  }

  #join(origin: string, rel: string, value: string): Held {
    this.parsed++;
    const r = parseEndpointRecord(value);
    const service = r ? `${r.namespace}/${r.service}` : undefined;
    if (service === undefined) this.#skipped++;
    else {
      let members = this.#members.get(service);
      if (!members) this.#members.set(service, members = new Map());
      members.set(`${origin}\u0000${rel}`, value);
      this.#dirty.add(service);
    }
    return { value, service };
  }

  #leave(origin: string, rel: string, held: Held): void {
    if (held.service === undefined) {
      this.#skipped--;
      return;
    }
    const members = this.#members.get(held.service);
    members?.delete(`${origin}\u0000${rel}`);
    if (members?.size === 0) this.#members.delete(held.service);
    this.#dirty.add(held.service);
  }
}
