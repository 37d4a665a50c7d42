/**
 * The statuses `/status` shows: each revision's computed statuses laid over the ones shown
 * before, so a condition keeps its lastTransitionTime until its status changes. A computed status
 * object that was shown last revision is shown as it was then (merging it again would give the
 * same), so an unchanged object costs no walk; a changed one is merged over what its object showed
 * last revision, found in a key index kept from one revision to the next (not rebuilt over every
 * object whenever one changed).
 * @module
 */
import { mergeStatus, type ObjectStatus } from "../gatewayapi/mod.ts";

const keyOf = (s: ObjectStatus) => `${s.kind}/${s.namespace ?? ""}/${s.name}`;

/** What a computed status was shown as, and the last revision that showed it. */
interface Shown {
  readonly shown: ObjectStatus;
  /** The number of the last {@link ShownStatuses.show} call that showed it. */
  at: number;
}

/** The shown statuses of one input stream. */
export class ShownStatuses {
  #shown: ObjectStatus[] = [];
  /** Calls of {@link show} so far. */
  #calls = 0;
  /** Per computed status object: what it was shown as. */
  #merged = new WeakMap<object, Shown>();
  /**
   * Per object key, its latest entry (the same object as in {@link #merged}): what the object
   * shows now when `at` is the last call, else a leftover of an object gone. Pruned to the current
   * objects when it holds twice as many keys.
   */
  #byKey = new Map<string, Shown>();

  /** What is shown now. */
  get current(): ObjectStatus[] {
    return this.#shown;
  }

  /** Shows `statuses` (resolve's, unmerged); `now` stamps conditions whose status changed. */
  show(statuses: readonly ObjectStatus[], now: Date): ObjectStatus[] {
    const last = this.#calls, call = ++this.#calls;
    let at: string | undefined;
    const out = statuses.map((s) => {
      const computed = typeof s.status === "object" && s.status !== null ? s.status : undefined;
      const seen = computed && this.#merged.get(computed);
      if (seen !== undefined && seen.at >= last && sameObject(seen.shown, s)) {
        seen.at = call;
        return seen.shown;
      }
      const key = keyOf(s);
      const before = this.#byKey.get(key);
      at ??= now.toISOString().replace(/\.\d+Z$/, "Z");
      const previous = before !== undefined && before.at >= last ? before.shown.status : undefined;
      const status = mergeStatus(previous, s.status, at);
      const entry: Shown = { shown: status === s.status ? s : { ...s, status }, at: call };
      if (computed) this.#merged.set(computed, entry);
      this.#byKey.set(key, entry);
      return entry.shown;
    });
    if (this.#byKey.size > 2 * out.length + 64) {
      const all = this.#byKey;
      this.#byKey = new Map();
      for (const s of out) {
        const key = keyOf(s), entry = all.get(key);
        if (entry?.at === call) this.#byKey.set(key, entry);
      }
    }
    this.#shown = out;
    return out;
  }
}

/** Whether two statuses are of the same object. */
const sameObject = (a: ObjectStatus, b: ObjectStatus) =>
  a.kind === b.kind && a.namespace === b.namespace && a.name === b.name &&
  a.apiVersion === b.apiVersion;
