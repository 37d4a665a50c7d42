/**
 * An in-memory source for tests and benchmarks: they set objects directly and each change is
 * delivered as a revision. No binary uses it, so it lives in the workshop, not in lib/source/.
 * @module
 */
import {
  objectKey,
  type Source,
  type SourceObject,
  type SourceRevision,
} from "../lib/source/mod.ts";

/** Holds objects in memory; `apply`/`remove` deliver a new revision to the subscriber. */
export class MemorySource implements Source {
  #objects = new Map<string, SourceObject>();
  #revision = 0;
  #listener?: (s: SourceRevision) => void;

  constructor(initial: SourceObject[] = []) {
    for (const o of initial) this.#objects.set(objectKey(o), o);
  }

  start(onRevision: (revision: SourceRevision) => void): Promise<void> {
    this.#listener = onRevision;
    this.#emit();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.#listener = undefined;
    return Promise.resolve();
  }

  /** Creates or replaces objects. */
  apply(...objects: SourceObject[]): void {
    for (const o of objects) this.#objects.set(objectKey(o), o);
    this.#emit();
  }

  /** Deletes objects by identity. */
  remove(...objects: SourceObject[]): void {
    for (const o of objects) this.#objects.delete(objectKey(o));
    this.#emit();
  }

  #emit(): void {
    if (!this.#listener) return;
    const objects = [...this.#objects.values()];
    this.#listener({
      revision: ++this.#revision,
      objects,
      problems: [],
      origins: new Map(objects.map((o) => [objectKey(o), "memory"])),
    });
  }
}
