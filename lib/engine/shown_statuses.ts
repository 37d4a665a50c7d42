/**
 * The statuses `/status` shows: each revision's computed statuses laid over the ones shown
 * before, so a condition keeps its lastTransitionTime until its status changes. A computed status
 * object that was merged last revision is shown as it was then (merging it again would give the
 * same), so an unchanged object costs no walk.
 * @module
 */
import { mergeStatus, type ObjectStatus } from "../gatewayapi/mod.ts";

const keyOf = (s: ObjectStatus) => `${s.kind}/${s.namespace ?? ""}/${s.name}`;

/** The shown statuses of one input stream. */
export class ShownStatuses {
  #shown: ObjectStatus[] = [];
  /** Per computed status object of the last revision: the merged status shown for it. */
  #merged = new Map<unknown, ObjectStatus>();

  /** What is shown now. */
  get current(): ObjectStatus[] {
    return this.#shown;
  }

  /** Shows `statuses` (resolve's, unmerged); `now` stamps conditions whose status changed. */
  show(statuses: readonly ObjectStatus[], now: Date): ObjectStatus[] {
    let before: Map<string, ObjectStatus> | undefined;
    const at = now.toISOString().replace(/\.\d+Z$/, "Z");
    const merged = new Map<unknown, ObjectStatus>();
    const out = statuses.map((s) => {
      const last = this.#merged.get(s.status);
      if (
        last !== undefined && last.kind === s.kind && last.namespace === s.namespace &&
        last.name === s.name && last.apiVersion === s.apiVersion
      ) {
        merged.set(s.status, last);
        return last;
      }
      before ??= new Map(this.#shown.map((o) => [keyOf(o), o]));
      const status = mergeStatus(before.get(keyOf(s))?.status, s.status, at);
      const result = status === s.status ? s : { ...s, status };
      merged.set(s.status, result);
      return result;
    });
    this.#merged = merged;
    this.#shown = out;
    return out;
  }
}
