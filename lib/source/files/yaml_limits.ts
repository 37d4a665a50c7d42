/**
 * Limits on what one config file may cost to read: file size, document count, nesting depth and
 * the size a document's aliases expand to ("billion laughs"). Parsed values are measured by one
 * walk that visits each distinct node once (memoized by identity), so even an alias bomb costs
 * only its distinct nodes to measure.
 * @module
 */

/** The limits (defaults in {@link defaultParseLimits}). */
export interface ParseLimits {
  /** Bytes of one file. */
  maxFileBytes: number;
  /** Documents in one file. */
  maxDocuments: number;
  /** Nesting depth of one document (mappings and sequences). */
  maxDepth: number;
  /** Nodes of one document once every alias is expanded. */
  maxNodes: number;
}

/**
 * Generous for real configs (a 10,000-route file is 8.8 MB and 20,002 documents; Kubernetes
 * objects nest about 15 deep) and far below what would hurt the agent.
 */
export const defaultParseLimits: Readonly<ParseLimits> = {
  maxFileBytes: 32 * 1024 * 1024,
  maxDocuments: 100_000,
  maxDepth: 100,
  maxNodes: 2_000_000,
};

/** A document over a limit; the message says which and what to do. */
export class LimitError extends Error {}

/** What {@link measure} found. */
export interface Measure {
  /** Nodes after alias expansion. */
  nodes: number;
  /** Whether some node is reachable twice (aliases are in use). */
  shared: boolean;
}

/**
 * Checks only the depth of a document that has no aliases (its text has no anchor `&`, so every
 * node is reached once and its size is its text's): a plain bounded walk, no memo.
 */
export function checkDepth(value: unknown, limits: ParseLimits): void {
  const walk = (v: unknown, depth: number): void => {
    if (typeof v !== "object" || v === null) return;
    if (depth > limits.maxDepth) {
      throw new LimitError(`nesting deeper than ${limits.maxDepth} levels`);
    }
    if (Array.isArray(v)) { for (const c of v) walk(c, depth + 1); }
    else for (const k in v) walk((v as Record<string, unknown>)[k], depth + 1);
  };
  walk(value, 1);
}

/**
 * Counts the expanded nodes and checks the depth of a parsed document. Throws LimitError when
 * the depth passes `maxDepth` or the expanded size passes `maxNodes`.
 */
export function measure(value: unknown, limits: ParseLimits): Measure {
  // Per distinct node: expanded size and height, so a shared node met again deeper is checked
  // without walking it again.
  const seen = new WeakMap<object, { n: number; h: number }>();
  let shared = false;
  const tooDeep = () => new LimitError(`nesting deeper than ${limits.maxDepth} levels`);
  const walk = (v: unknown, depth: number): { n: number; h: number } => {
    if (typeof v !== "object" || v === null) return { n: 1, h: 0 };
    if (depth > limits.maxDepth) throw tooDeep();
    const known = seen.get(v);
    if (known !== undefined) {
      shared = true;
      if (depth + known.h > limits.maxDepth) throw tooDeep();
      return known;
    }
    let n = 1, h = 0;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) {
      const r = walk(c, depth + 1);
      n += r.n;
      if (r.h + 1 > h) h = r.h + 1;
      if (n > limits.maxNodes) break;
    }
    const out = { n, h };
    seen.set(v, out);
    return out;
  };
  const nodes = walk(value, 1).n;
  if (nodes > limits.maxNodes) {
    throw new LimitError(
      `aliases expand to more than ${limits.maxNodes} nodes (an alias bomb?); write the values out or use fewer aliases`,
    );
  }
  return { nodes, shared };
}
