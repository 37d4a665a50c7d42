/**
 * The statuses `/status` shows: each revision's computed statuses laid over the ones shown
 * before, so a condition keeps its lastTransitionTime until its status changes. The display keeps
 * its state position by position: a computed status object given at the same position (for the
 * same object) as last revision is shown as it was then, with no look-up at all (merging it again
 * would give the same), so an edit re-renders only the statuses that changed. A status at a new
 * position (objects were added or removed before it) is looked for one position either side, then
 * by key in an index of what was shown last revision, built only when one is needed: not when
 * every status shown last revision was found by position (the others are new objects).
 * @module
 */
import { mergeStatus, type ObjectStatus } from "../gatewayapi/mod.ts";
import type { MemoStats } from "../memo/mod.ts";

const keyOf = (s: ObjectStatus) => `${s.kind}/${s.namespace ?? ""}/${s.name}`;

const isObject = (v: unknown): v is object => typeof v === "object" && v !== null;

/** The shown statuses of one input stream. */
export class ShownStatuses {
  /** What is shown, position by position with {@link #given}. */
  #shown: ObjectStatus[] = [];
  /** The statuses the last {@link show} was given. */
  #given: readonly ObjectStatus[] = [];
  /** Per computed status object: what it was last shown as. */
  #merged = new WeakMap<object, ObjectStatus>();
  /** Statuses shown as at their last position (hits) or looked up and merged (misses). */
  readonly #stats: MemoStats = { hits: 0, misses: 0 };
  /** Key indexes built (see {@link indexesBuilt}). */
  #indexes = 0;

  /** What is shown now. */
  get current(): ObjectStatus[] {
    return this.#shown;
  }

  /** How many statuses were shown as at their last position, and how many looked up. */
  stats(): MemoStats {
    return { ...this.#stats };
  }

  /** How many times a key index of what was shown was built (a status not found by position). */
  get indexesBuilt(): number {
    return this.#indexes;
  }

  /** Shows `statuses` (resolve's, unmerged); `now` stamps conditions whose status changed. */
  show(statuses: readonly ObjectStatus[], now: Date): ObjectStatus[] {
    const given = this.#given, shown = this.#shown;
    const out: ObjectStatus[] = new Array(statuses.length);
    /** Statuses found neither at their position nor one either side (new, or moved far). */
    const pending: number[] = [];
    let shift = 0, hits = 0, matched = 0;
    let at: string | undefined;
    const stamp = () => at ??= now.toISOString().replace(/\.\d+Z$/, "Z");
    for (let i = 0; i < statuses.length; i++) {
      const s = statuses[i];
      const g = given[i + shift];
      if (g !== undefined && g.status === s.status && isObject(s.status) && sameObject(g, s)) {
        hits++;
        matched++;
        out[i] = shown[i + shift];
        continue;
      }
      this.#stats.misses++;
      let found = false;
      for (const d of [0, 1, -1]) {
        const near = given[i + shift + d];
        if (near !== undefined && sameObject(near, s)) {
          shift += d;
          found = true;
          break;
        }
      }
      if (!found) {
        pending.push(i);
        continue;
      }
      matched++;
      out[i] = this.#entry(s, shown[i + shift], stamp);
    }
    if (pending.length > 0) {
      // When every status shown last revision was found again, the others are new: no index.
      let index: Map<string, ObjectStatus> | undefined;
      if (matched < given.length) {
        this.#indexes++;
        index = new Map(shown.map((x) => [keyOf(x), x]));
      }
      for (const i of pending) {
        out[i] = this.#entry(statuses[i], index?.get(keyOf(statuses[i])), stamp);
      }
    }
    this.#stats.hits += hits;
    this.#given = statuses;
    this.#shown = out;
    return out;
  }

  /**
   * `s` merged over `last` (what its object showed last revision; `stamp()` the time of a changed
   * condition), remembered per status object.
   */
  #entry(s: ObjectStatus, last: ObjectStatus | undefined, stamp: () => string): ObjectStatus {
    const computed = isObject(s.status) ? s.status : undefined;
    const seen = computed && this.#merged.get(computed);
    if (seen !== undefined && seen === last) return seen;
    const status = mergeStatus(last?.status, s.status, stamp());
    const entry = status === s.status ? s : { ...s, status };
    if (computed) this.#merged.set(computed, entry);
    return entry;
  }
}

/** Whether two statuses are of the same object. */
const sameObject = (a: ObjectStatus, b: ObjectStatus) =>
  a.kind === b.kind && a.namespace === b.namespace && a.name === b.name &&
  a.apiVersion === b.apiVersion;
