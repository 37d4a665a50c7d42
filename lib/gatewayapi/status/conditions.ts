/**
 * Status condition helpers: every condition carries observedGeneration and the injected time.
 * @module
 */
import type { Condition } from "../types.ts";

/** The outcome of one check: a reason and message, true or false. */
export interface Outcome {
  ok: boolean;
  reason: string;
  message: string;
}

/** A true outcome. */
export const pass = (reason: string, message: string): Outcome => ({ ok: true, reason, message });
/** A false outcome. */
export const fail = (reason: string, message: string): Outcome => ({ ok: false, reason, message });

/** Builds Conditions for one object generation at one time. */
export class ConditionFactory {
  constructor(readonly generation: number, readonly now: string) {}

  /** A condition of `type` from an outcome. */
  of(type: string, outcome: Outcome): Condition {
    return {
      type,
      status: outcome.ok ? "True" : "False",
      reason: outcome.reason,
      message: outcome.message,
      observedGeneration: this.generation,
      lastTransitionTime: this.now,
    };
  }
}
