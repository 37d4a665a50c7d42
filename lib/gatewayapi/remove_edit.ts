/**
 * The remove path of resolve: a revision that only deletes one HTTP-chain route (HTTPRoute,
 * GRPCRoute) whose hostnames are exact is resolved on the last result (state/last.ts) — the
 * virtual hosts of its hostnames rendered again without it, or dropped when nothing else names
 * their hostname; the clusters only it forwarded to dropped from the IR; its status taken out; its
 * listeners' attachedRoutes counted down and their Gateways' statuses made again. Everything else
 * is the last result's own objects. The result deep-equals a resolve of the same objects with a
 * new state (remove_edit_test.ts).
 *
 * A removal qualifies when the options are the same, every other object is the same object in
 * the same order, no other object has the route's kind, namespace and name, and the route was
 * admitted cleanly, named no Service parent, and was settled with every parent of ours accepting
 * it, no unsupported feature, no name conflict and no problem about it; every route with Gateway
 * parents is of its kind (no cross-kind hostname conflict); each of its placements names exact
 * hostnames only (a wildcard or a catch-all route sits in every virtual host it covers: resolved
 * cold), and it is an input of the virtual host of each. A hostname that only this route placed
 * on a chain of several listeners goes cold too (another listener's route may still name it). A
 * route that no parent of ours took changes nothing. Pure: the state is passed in and out.
 * @module
 */
import { renderVhost } from "./build_ir.ts";
import { vhostClusters } from "./edit_common.ts";
import {
  applyVhosts,
  chainRoute,
  type ChainWant,
  exactPlacements,
  recountAttached,
  remember,
  rememberChanged,
  siteStarts,
  type VhostChange,
} from "./vhost_changes.ts";
import type { LastResolve, ResolveState } from "./state/mod.ts";
import type { ResolveOptions, ResolveResult } from "./resolve_types.ts";
import type { KubeObject } from "./types.ts";
import type { IR, IRFilterChain, IRHttpFilterChain, IRListener } from "../ir/mod.ts";

/** Where `objects` is `before` with one object taken out: its position in `before`, else undefined. */
export function removedAt(
  objects: readonly KubeObject[],
  before: readonly KubeObject[],
): number | undefined {
  if (objects.length + 1 !== before.length) return undefined;
  let at = 0;
  while (at < objects.length && objects[at] === before[at]) at++;
  for (let i = at; i < objects.length; i++) if (objects[i] !== before[i + 1]) return undefined;
  return at;
}

/**
 * The result of deleting `last.objects[at]` when the removal qualifies (see the module doc),
 * resolved on the last result and remembered; else undefined (nothing changed).
 */
export function removeOnLast(
  objects: KubeObject[],
  options: ResolveOptions,
  state: ResolveState,
  at: number,
): ResolveResult | undefined {
  const last = state.last.value!;
  const starts = siteStarts(last);
  const taken = starts && chainRoute(last.objects[at], options, state);
  if (!taken) return undefined;
  const { route, same } = taken;
  const kind = taken.def.kind;
  const { name, namespace } = route.metadata;
  const named = (o: { kind: string; namespace?: string; name: string }) =>
    o.kind === kind && o.namespace === namespace && o.name === name;
  if (objects.some(same)) return undefined;
  if (last.result.problems.some(named)) return undefined;
  // By name, not by object: a route no parent of ours took is not among them, and then nothing
  // changes; one whose admitted object is not the one settled is not trusted (resolved cold).
  const index = last.routes.findIndex((r) => same(r.route));
  if (index < 0) return remember(objects, state, last.result, false);
  const settled = last.routes[index];
  if (settled.route !== route) return undefined;
  const { parents, converted } = settled;
  if (!parents.every((p) => p.accepted.ok)) return undefined;
  if (converted.unsupported || converted.conflicts.length > 0) return undefined;

  const placed = exactPlacements(last, parents);
  if (!placed) return undefined;
  const { placements, wanted } = placed;
  const changes: VhostChange[] = [];
  for (const want of wanted.values()) {
    const made = takeFrom(last, starts, want, route);
    if (!made) return undefined;
    changes.push(...made);
  }
  const statusAt = last.result.statuses.findIndex(named);
  if (statusAt < 0) return undefined;

  // Committed from here on: the IR, the sites, the statuses, the counts.
  const dropped = new Set(converted.clusters.length ? clustersOf(changes, last) : []);
  const listeners = applyVhosts(last, starts, changes);
  const statuses = last.result.statuses.slice();
  statuses.splice(statusAt, 1);
  recountAttached(last, statuses, placements.keys(), -1);
  last.routes.splice(index, 1);
  keepUnused(listeners, dropped);
  const ir: IR = {
    ...last.result.ir,
    listeners,
    clusters: dropped.size
      ? last.result.ir.clusters.filter((c) => !dropped.has(c.name))
      : last.result.ir.clusters,
  };
  return rememberChanged(objects, state, ir, statuses);
}

/**
 * The virtual hosts the route leaves on one chain: per hostname, the one it sits in rendered again
 * without it, or dropped when no other input places that very hostname and no listener of the
 * chain is for it. Undefined when the route is not an input of one of them, or when a hostname
 * would go on a chain of several listeners (another listener's route may name it).
 */
function takeFrom(
  last: LastResolve,
  starts: ReadonlyMap<string, number>,
  want: ChainWant,
  route: KubeObject,
): VhostChange[] | undefined {
  const { li, ci, group } = want;
  const chain = last.result.ir.listeners[li].filterChains[ci] as IRHttpFilterChain;
  const first = starts.get(`${li}/${ci}`)!;
  const out: VhostChange[] = [];
  for (const domain of want.domains.keys()) {
    const vi = chain.virtualHosts.findIndex((v) => v.name === domain);
    if (vi < 0) return undefined;
    const site = last.sites[first + vi];
    const inputs = site.inputs.filter((input) => input[0] !== route);
    if (inputs.length === site.inputs.length) return undefined;
    const { listenerId, context } = site;
    const named = inputs.some((input) => input[2] === domain) ||
      group.some((l) => l.listener.hostname === domain);
    if (named) {
      const vhost = renderVhost(domain, context, inputs);
      out.push({ li, ci, vi, op: "render", listenerId, domain, context, inputs, vhost });
    } else if (group.length === 1) {
      out.push({
        li,
        ci,
        vi,
        op: "remove",
        listenerId,
        domain,
        context,
        inputs,
        vhost: site.vhost,
      });
    } else return undefined;
  }
  return out;
}

/** The clusters the virtual hosts the changes touch forwarded or mirrored to, before them. */
function clustersOf(changes: readonly VhostChange[], last: LastResolve): Set<string> {
  const out = new Set<string>();
  for (const c of changes) {
    const chain = last.result.ir.listeners[c.li].filterChains[c.ci] as IRHttpFilterChain;
    for (const name of vhostClusters(chain.virtualHosts[c.vi])) out.add(name);
  }
  return out;
}

/**
 * Takes out of `candidates` every cluster one of `listeners`' chains forwards or mirrors to (the
 * scan ends as soon as none is left): what stays is used by none.
 */
function keepUnused(listeners: readonly IRListener[], candidates: Set<string>): void {
  const seen = (cluster: string) => candidates.delete(cluster) && candidates.size === 0;
  for (const l of listeners) {
    for (const chain of l.filterChains as IRFilterChain[]) {
      if (candidates.size === 0) return;
      if (chain.kind !== "http") {
        for (const b of chain.backends) if (seen(b.cluster)) return;
        continue;
      }
      for (const vh of chain.virtualHosts) {
        for (const r of vh.routes) {
          if (r.action.kind !== "forward") continue;
          for (const b of r.action.backends) if (seen(b.cluster)) return;
          for (const m of r.action.mirrors) if (seen(m.cluster)) return;
        }
      }
    }
  }
}
