/**
 * A value made on first use, once per owner: typically a module loaded by a dynamic `import()`
 * that only some runs need (the CEL library), so a start-up pays for it only
 * when it is used. The owner holds the instance (a ResolveState, a command run): never a
 * module-level cache.
 * @module
 */

/** A value loaded on first `get()`; `peek()` gives it without loading once it has loaded. */
export class Lazy<T> {
  #value: T | undefined;
  #loading: Promise<T> | undefined;

  constructor(readonly load: () => Promise<T>) {}

  /** The value, loading it on the first call (every caller shares that one load). */
  get(): Promise<T> {
    this.#loading ??= this.load().then(
      (value) => this.#value = value,
      (e) => {
        // A failed load is tried again by the next get().
        this.#loading = undefined;
        throw e;
      },
    );
    return this.#loading;
  }

  /** The value when it has loaded, else undefined (never starts a load). */
  peek(): T | undefined {
    return this.#value;
  }
}
