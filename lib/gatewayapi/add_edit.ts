/**
 * The add path of resolve: a revision that only inserts one HTTP-chain route (HTTPRoute,
 * GRPCRoute) whose hostnames are exact is resolved on the last result (state/last.ts) — the route
 * admitted, attached and converted; the virtual hosts of its hostnames rendered again, or made
 * and put in their sorted place when the hostname is new (with the wildcard routes of the listener
 * that cover it); its status made and put in its sorted place; its listeners' attachedRoutes
 * counted and their Gateways' statuses made again. Everything else is the last result's own
 * objects. The result deep-equals a resolve of the same objects with a new state (edit_test.ts).
 *
 * An add qualifies when the options are the same, every other object is the same object in the
 * same order, the new route names no Service parent and no other object has its kind, namespace
 * and name; every route with Gateway parents is of its kind (no cross-kind hostname conflict);
 * every parent of ours accepts it; it converts without an unsupported feature or a name conflict;
 * every cluster it needs was made already, as it is (Backends.holds) and forwarded to by the IR;
 * and each of its placements names exact hostnames only (a wildcard or a catch-all route reaches
 * every virtual host it covers: resolved cold). Pure: the state is passed in and out explicitly.
 * @module
 */
import { convertOnLast, vhostClusters } from "./edit_common.ts";
import { attachRoute } from "./attachment.ts";
import { compareHostnames, covers } from "./hostnames.ts";
import { listenerHost, renderVhost } from "./build_ir.ts";
import { keyOf, type Obj } from "./object_index.ts";
import { statusOf } from "./resolve.ts";
import { routeStatuses } from "./route_status.ts";
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
import type { LastResolve, ResolveState, VhostInput } from "./state/mod.ts";
import type { ListenerContext } from "./routes/kind.ts";
import type { ResolveOptions, ResolveResult } from "./resolve_types.ts";
import type { KubeObject, RouteSpecCommon } from "./types.ts";
import type { IRHttpFilterChain } from "../ir/mod.ts";

/** Where `objects` is `before` with one object inserted: its position, else undefined. */
export function insertedAt(
  objects: readonly KubeObject[],
  before: readonly KubeObject[],
): number | undefined {
  if (objects.length !== before.length + 1) return undefined;
  let at = 0;
  while (at < before.length && objects[at] === before[at]) at++;
  for (let i = at; i < before.length; i++) if (objects[i + 1] !== before[i]) return undefined;
  return at;
}

/**
 * The result of inserting `objects[at]` when the add qualifies (see the module doc), resolved on
 * the last result and remembered; else undefined (nothing changed).
 */
export function addOnLast(
  objects: KubeObject[],
  options: ResolveOptions,
  state: ResolveState,
  at: number,
): ResolveResult | undefined {
  const last = state.last.value!;
  const starts = siteStarts(last);
  const taken = starts && chainRoute(objects[at], options, state);
  if (!taken) return undefined;
  const { def, route, same } = taken;
  const kind = def.kind;
  const key = keyOf(route);
  if (objects.some((o, i) => i !== at && same(o))) return undefined;
  const gatewayMap = new Map(last.gateways.map((g) => [keyOf(g.gateway), g]));
  const parents = state.attach.attach(
    last.attached,
    kind,
    route,
    (r) => attachRoute(last.indexed, gatewayMap, kind, r),
  );
  if (parents.length === 0) return remember(objects, state, last.result, false);
  if (!parents.every((p) => p.accepted.ok)) return undefined;
  const converted = convertOnLast(state, def, route);
  if (converted.unsupported || converted.conflicts.length > 0) return undefined;
  if (!last.backends.holds(converted)) return undefined;

  const placed = exactPlacements(last, parents);
  if (!placed) return undefined;
  const { placements, wanted } = placed;
  const changes: VhostChange[] = [];
  for (const want of wanted.values()) {
    const made = placeOn(last, starts, want, route, converted);
    if (!made) return undefined;
    changes.push(...made);
  }
  const irClusters = new Set(last.result.ir.clusters.map((c) => c.name));
  for (const c of changes) {
    if (![...vhostClusters(c.vhost)].every((n) => irClusters.has(n))) return undefined;
  }
  const statusAt = routeStatusAt(last.result.statuses, kind, key);
  if (statusAt === undefined) return undefined;

  // Committed from here on: the IR, the sites, the statuses, the counts.
  const listeners = applyVhosts(last, starts, changes);
  const statuses = last.result.statuses.slice();
  const [made] = routeStatuses(
    [kind],
    [{ controllerName: last.controllerName, routes: [{ kind, route, parents, converted }] }],
    last.now,
    state.statuses,
  );
  statuses.splice(statusAt, 0, statusOf(route, made.status));
  recountAttached(last, statuses, placements.keys(), 1);
  last.routes.push({ kind, route, parents, converted });
  return rememberChanged(objects, state, { ...last.result.ir, listeners }, statuses);
}

/**
 * The virtual hosts the route changes on one chain: per hostname, the existing one rendered again
 * with the route when one of its listeners owns it, or a new one (every hostname of a placement
 * is a domain) with its owner's routes whose wildcard hostname covers it, and the route's own
 * when one of its listeners is the owner. Undefined when a hostname has no owner.
 */
function placeOn(
  last: LastResolve,
  starts: ReadonlyMap<string, number>,
  want: ChainWant,
  route: Obj<RouteSpecCommon>,
  converted: VhostInput[1],
): VhostChange[] | undefined {
  const { li, ci, group } = want;
  const chain = last.result.ir.listeners[li].filterChains[ci] as IRHttpFilterChain;
  // The chain's sites: contiguous in `last.sites`, in its virtual hosts' order.
  const first = starts.get(`${li}/${ci}`)!;
  const sites = last.sites.slice(first, first + chain.virtualHosts.length);
  const out: VhostChange[] = [];
  for (const [domain, placed] of want.domains) {
    const owner = group.find((x) => covers(listenerHost(x), domain));
    if (!owner) return undefined;
    const mine = placed.includes(owner);
    const vi = chain.virtualHosts.findIndex((v) => v.name === domain);
    if (vi >= 0) {
      const site = sites[vi];
      if (!mine) continue;
      if (site.listenerId !== owner.id) return undefined;
      const inputs: VhostInput[] = [...site.inputs, [route, converted, domain]];
      const vhost = renderVhost(domain, site.context, inputs);
      const { listenerId, context } = site;
      out.push({ li, ci, vi, op: "render", listenerId, domain, context, inputs, vhost });
      continue;
    }
    const best = new Map<KubeObject, VhostInput>();
    for (const site of sites) {
      if (site.listenerId !== owner.id) continue;
      for (const input of site.inputs) {
        if (!covers(input[2], domain)) continue;
        const seen = best.get(input[0]);
        if (!seen || compareHostnames(input[2], seen[2]) < 0) best.set(input[0], input);
      }
    }
    const inputs = [...best.values()];
    if (mine) inputs.push([route, converted, domain]);
    const context = {
      port: owner.listener.port,
      protocol: owner.listener.protocol,
    } as ListenerContext;
    const vhost = renderVhost(domain, context, inputs);
    let pos = 0;
    while (
      pos < chain.virtualHosts.length &&
      compareHostnames(chain.virtualHosts[pos].name, domain) < 0
    ) pos++;
    const listenerId = owner.id;
    out.push({ li, ci, vi: pos, op: "insert", listenerId, domain, context, inputs, vhost });
  }
  return out;
}

/**
 * Where a new route status of `kind` and `key` (`<namespace>/<name>`) goes: among the statuses of
 * its kind, by key; undefined when there is none of its kind (where the kind's first goes is not
 * worth finding here).
 */
function routeStatusAt(
  statuses: ResolveResult["statuses"],
  kind: string,
  key: string,
): number | undefined {
  const keyOfStatus = (s: { namespace?: string; name: string }) =>
    s.namespace ? `${s.namespace}/${s.name}` : s.name;
  let end: number | undefined;
  for (let i = 0; i < statuses.length; i++) {
    if (statuses[i].kind !== kind) {
      if (end !== undefined) break;
      continue;
    }
    if (keyOfStatus(statuses[i]) > key) return i;
    end = i + 1;
  }
  return end;
}
