/**
 * What a metrics registry renders (apart from mod.ts so that process.ts, which mod.ts re-exports,
 * needs no import of mod.ts).
 * @module
 */

/** Anything a registry renders: a name and its exposition lines (HELP and TYPE too). */
export interface Metric {
  readonly name: string;
  render(): string[];
}
