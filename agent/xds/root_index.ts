/**
 * What is derived once from a loaded protobufjs Root (it never changes once resolved): its message
 * types by full name (proto.ts) and, per message type, what a module makes of it
 * (direct_encode.ts's field tables). One index per Root, kept on the Root itself.
 * @module
 */
import type protobuf from "protobufjs";

/** A Root's index. */
export class RootIndex {
  readonly types = new Map<string, protobuf.Type>();
  readonly #derived = new Map<string, WeakMap<protobuf.Type, unknown>>();

  /** `make(type)`, made once per `purpose` and type. */
  derive<T>(purpose: string, type: protobuf.Type, make: (type: protobuf.Type) => T): T {
    let memo = this.#derived.get(purpose);
    if (!memo) this.#derived.set(purpose, memo = new WeakMap());
    if (memo.has(type)) return memo.get(type) as T;
    const made = make(type);
    memo.set(type, made);
    return made;
  }
}

/** Where a Root keeps its index: a property of the Root itself, owned (and dropped) with it. */
const INDEX = Symbol("aether.rootIndex");

/** The index of `root` (one per loaded Root, made on first use). */
export function rootIndex(root: protobuf.Root): RootIndex {
  const owner = root as protobuf.Root & { [INDEX]?: RootIndex };
  return owner[INDEX] ??= new RootIndex();
}
