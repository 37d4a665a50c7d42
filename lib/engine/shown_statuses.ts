/**
 * The statuses `/status` shows: each revision's computed statuses laid over the ones shown
 * before, so a condition keeps its lastTransitionTime until its status changes. The display keeps
 * its state position by position: a computed status object given at the same position (for the
 * same object) as last revision is shown as it was then, with no look-up at all (merging it again
 * would give the same), so an edit re-renders only the statuses that changed. A status at a new
 * position (objects were added or removed before it) is looked for one position either side, then
 * by key in an index of what was shown last revision, built only when one is needed.
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

  /** What is shown now. */
  get current(): ObjectStatus[] {
    return this.#shown;
  }

  /** How many statuses were shown as at their last position, and how many looked up. */
  stats(): MemoStats {
    return { ...this.#stats };
  }

  /** Shows `statuses` (resolve's, unmerged); `now` stamps conditions whose status changed. */
  show(statuses: readonly ObjectStatus[], now: Date): ObjectStatus[] {
    const given = this.#given, shown = this.#shown;
    let at: string | undefined;
    let index: Map<string, ObjectStatus> | undefined;
    let shift = 0;
    /** What `s`'s object showed last revision: at `i` (shifted by one at most), or by key. */
    const before = (s: ObjectStatus, i: number): ObjectStatus | undefined => {
      for (const d of [0, 1, -1]) {
        const g = given[i + shift + d];
        if (g !== undefined && sameObject(g, s)) {
          shift += d;
          return shown[i + shift];
        }
      }
      index ??= new Map(shown.map((x) => [keyOf(x), x]));
      return index.get(keyOf(s));
    };
    let hits = 0;
    const out = statuses.map((s, i) => {
      const g = given[i + shift];
      if (g !== undefined && g.status === s.status && isObject(s.status) && sameObject(g, s)) {
        hits++;
        return shown[i + shift];
      }
      const computed = isObject(s.status) ? s.status : undefined;
      this.#stats.misses++;
      const last = before(s, i);
      const seen = computed && this.#merged.get(computed);
      if (seen !== undefined && seen === last) return seen;
      at ??= now.toISOString().replace(/\.\d+Z$/, "Z");
      const status = mergeStatus(last?.status, s.status, at);
      const entry = status === s.status ? s : { ...s, status };
      if (computed) this.#merged.set(computed, entry);
      return entry;
    });
    this.#stats.hits += hits;
    this.#given = statuses;
    this.#shown = out;
    return out;
  }
}

/** Whether two statuses are of the same object. */
const sameObject = (a: ObjectStatus, b: ObjectStatus) =>
  a.kind === b.kind && a.namespace === b.namespace && a.name === b.name &&
  a.apiVersion === b.apiVersion;
