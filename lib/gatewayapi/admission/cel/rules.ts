/**
 * The CEL library, loaded only when a config reaches a rule that needs it. Most CRD rules have a
 * hand-written predicate (admission/cel/predicates.ts); the others (CORS lists, external auth, session
 * persistence, TLSRoute hostnames, Gateway infrastructure and per-port TLS) run on @bufbuild/cel,
 * whose load is ≈ 80 ms and ≈ 17 MiB at start-up — so a run whose objects never reach one does
 * not load it. One CelRules per owner (a ResolveState): it holds the loaded library and each rule
 * compiled on its first use.
 *
 * Admission is synchronous, so the library is loaded before the walk that needs it: a walk that
 * reaches a library rule first throws {@link CelNotLoaded}; the engine (lib/engine) then loads it
 * and applies its newest revision again (tests resolve through `resolveLoadingCel`, their own
 * support in lib/gatewayapi/_test_utils.ts); an owner may also call `load()` up front.
 * @module
 */
import type { CelCheck, CelCompiler } from "./library.ts";
import type { CelEvaluator, CelRule } from "../structural_schema.ts";
import { Lazy } from "../../../memo/mod.ts";

/** A CEL rule was reached before the CEL library was loaded. */
export class CelNotLoaded extends Error {
  constructor(rule: string) {
    super(
      `CEL rule ${JSON.stringify(rule)} needs the CEL library, which is not loaded: ` +
        "resolve through the engine (lib/engine), which loads it, or await the ResolveState's " +
        "cel.load() first",
    );
    this.name = "CelNotLoaded";
  }
}

/** The CEL library of one owner, loaded on `load()`; rules compiled once each. */
export class CelRules implements CelEvaluator {
  readonly #compiler = new Lazy<CelCompiler>(async () =>
    new (await import("./library.ts")).CelCompiler()
  );
  readonly #compiled = new Map<CelRule, CelCheck>();

  /** Whether the library has loaded. */
  get loaded(): boolean {
    return this.#compiler.peek() !== undefined;
  }

  /** Loads the library (once; later calls share the first load). */
  async load(): Promise<this> {
    await this.#compiler.get();
    return this;
  }

  check(rule: CelRule, self: unknown): boolean {
    let check = this.#compiled.get(rule);
    if (!check) {
      const compiler = this.#compiler.peek();
      if (!compiler) throw new CelNotLoaded(rule.rule);
      check = compiler.compile(rule.rule, rule.schema);
      this.#compiled.set(rule, check);
    }
    return check(self);
  }
}

/** `cel`, or a CelNotLoaded for `rule` when the walk was given none. */
export function celFor(cel: CelEvaluator | undefined, rule: CelRule): CelEvaluator {
  if (!cel) throw new CelNotLoaded(rule.rule);
  return cel;
}
