/**
 * Promises waiting for something to hold under a name (a pod key or a netns path): settled when
 * the owner says it holds, rejected when the caller's signal aborts (with the owner's reason
 * why it does not hold yet) or the owner closes.
 * @module
 */

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: Error): void;
  done(): void;
}

/** Waiters by name; see the module doc. */
export class Waiters<T> {
  readonly #byName = new Map<string, Set<Waiter<T>>>();

  /** How many are waiting (for every name). */
  get size(): number {
    let n = 0;
    for (const set of this.#byName.values()) n += set.size;
    return n;
  }

  /**
   * A promise for `name`: `now` when it already holds, else settled by {@link resolve}. When
   * `signal` aborts it rejects with `whyNot()` in the message.
   */
  wait(name: string, now: T | undefined, whyNot: () => string, signal?: AbortSignal): Promise<T> {
    if (now !== undefined) return Promise.resolve(now);
    return new Promise<T>((resolve, reject) => {
      let set = this.#byName.get(name);
      if (!set) this.#byName.set(name, set = new Set());
      const onAbort = () => {
        w.done();
        reject(new Error(`capture of ${name} is not in place: ${whyNot()}`));
      };
      const w: Waiter<T> = {
        resolve: (v) => {
          w.done();
          resolve(v);
        },
        reject: (e) => {
          w.done();
          reject(e);
        },
        done: () => {
          signal?.removeEventListener("abort", onAbort);
          set.delete(w);
          if (set.size === 0 && this.#byName.get(name) === set) this.#byName.delete(name);
        },
      };
      set.add(w);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Settles every waiter of each of `names` with `value`. */
  resolve(names: readonly string[], value: T): void {
    for (const name of names) for (const w of [...this.#byName.get(name) ?? []]) w.resolve(value);
  }

  /** Rejects every waiter with `error` (the owner closes). */
  rejectAll(error: Error): void {
    for (const set of [...this.#byName.values()]) for (const w of [...set]) w.reject(error);
  }
}
