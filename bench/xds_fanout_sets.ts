/**
 * The dependency sets of bench/xds_fanout.ts: node n holds svc-0 (so one change reaches every
 * node) and `setSize - 1` services drawn with seed n, sorted. Shared by the client and server.
 * @module
 */
import { lcg } from "../testbed/fixtures/lcg.ts";

/** Every node's dependency set (authorities, sorted). */
export function fanoutSets(services: number, nodes: number, setSize: number): string[][] {
  const domain = "aether.internal";
  return Array.from({ length: nodes }, (_, n) => {
    const rnd = lcg(n + 7);
    const deps = new Set([`svc-0.${domain}`]);
    while (deps.size < Math.min(setSize, services)) {
      deps.add(`svc-${Math.floor(rnd() * services)}.${domain}`);
    }
    return [...deps].sort();
  });
}
