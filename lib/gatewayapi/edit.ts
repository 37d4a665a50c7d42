/**
 * The edit path of resolve: a revision that only edits a few HTTP-chain routes (HTTPRoute,
 * GRPCRoute) in place is resolved on the last result (state/last.ts) — the edited routes
 * converted again, their statuses made again and the virtual hosts they sit in rendered again;
 * everything else is the last result's own objects. A revision that inserts one route takes the
 * add path (add_edit.ts), one that deletes one the remove path (remove_edit.ts). Any other
 * revision is resolved cold (resolve.ts, still with the state's memos). Either way the result
 * deep-equals a resolve of the same objects with a new state (edit_test.ts holds every golden
 * case and seeded edits to it).
 *
 * An edit qualifies when the options are the same as last time (key by key), every other object
 * is the same object at the same position, at most {@link EDIT_MAX_ROUTES} routes changed, and
 * each changed route kept its kind, apiVersion, namespace, name, creationTimestamp, parentRefs
 * and hostnames (so its attachment and its age order hold), has no Service (GAMMA) parent, was
 * admitted cleanly before and after (no problem, every parent accepted: no conflict, no
 * unsupported feature), needs the very same backend clusters, and its virtual hosts forward to
 * the same clusters as before (so the IR's clusters and the mesh's hold).
 * A revision that changes only ClusterSetEndpoints objects takes the endpoints path instead
 * (endpoints_edit.ts: the clusters they feed get their endpoints made again on the last result).
 * Pure: the state is passed in and out explicitly.
 * @module
 */
import { equalData } from "../data/mod.ts";
import {
  admitted,
  changedPositions,
  convertOnLast,
  sameOptions,
  vhostClusters,
} from "./edit_common.ts";
import { endpointsOnLast, isEndpointsChange } from "./endpoints_edit.ts";
import { addOnLast, insertedAt } from "./add_edit.ts";
import { removedAt, removeOnLast } from "./remove_edit.ts";
import { isMeshParent } from "./mesh/attachment.ts";
import { renderVhost } from "./build_ir.ts";
import { resolve, statusOf } from "./resolve.ts";
import { ROUTE_KINDS } from "./routes/registry.ts";
import { routeStatuses } from "./route_status.ts";
import {
  idOf,
  type LastRoute,
  ResolveState,
  type VhostInput,
  type VhostSite,
} from "./state/mod.ts";
import type { ConvertedRoute } from "./routes/kind.ts";
import type { ResolveOptions, ResolveResult } from "./resolve_types.ts";
import type { Obj } from "./object_index.ts";
import type { KubeObject, RouteSpecCommon } from "./types.ts";
import type { IRFilterChain, IRListener, IRVirtualHost } from "../ir/mod.ts";

/** The most routes one revision may change and still take the edit path. */
export const EDIT_MAX_ROUTES = 64;

/**
 * How a revision was resolved: from scratch (with the memos), on the last result (a few routes
 * edited), on the last result with only ClusterSetEndpoints objects changed (endpoints_edit.ts),
 * on the last result with one route inserted (add_edit.ts), or with one route deleted
 * (remove_edit.ts).
 */
export type ResolvePath = "cold" | "edit" | "endpoints" | "add" | "remove";

/** One changed route: where it is in the last resolve, and what it became. */
interface Change {
  at: number;
  before: LastRoute;
  after: LastRoute;
}

/**
 * resolve() of `objects`, on the last result of `state` when the revision is an edit that
 * qualifies (see the module doc), else cold. The result is read-only and may share objects with
 * earlier results of the same state. Throws what resolve() throws (CelNotLoaded).
 */
export function resolveEdit(
  objects: KubeObject[],
  options: ResolveOptions = {},
  state: ResolveState = new ResolveState(),
): { result: ResolveResult; path: ResolvePath } {
  const last = state.last.value;
  const changed = last && sameOptions(last.options, options)
    ? changedPositions(objects, last.objects, objects.length)
    : undefined;
  const same = last !== undefined && !changed && sameOptions(last.options, options);
  const added = same ? insertedAt(objects, last.objects) : undefined;
  const removed = same && added === undefined ? removedAt(objects, last.objects) : undefined;
  if (added !== undefined) {
    const result = addOnLast(objects, options, state, added);
    if (result) return { result, path: "add" };
  } else if (removed !== undefined) {
    const result = removeOnLast(objects, options, state, removed);
    if (result) return { result, path: "remove" };
  } else if (
    changed && changed.length > 0 && isEndpointsChange(objects, last!.objects, changed)
  ) {
    const result = endpointsOnLast(objects, state, changed);
    if (result) return { result, path: "endpoints" };
  } else if (changed && changed.length <= EDIT_MAX_ROUTES) {
    const result = editOnLast(objects, options, state, changed);
    if (result) return { result, path: "edit" };
  }
  return { result: resolve(objects, options, state), path: "cold" };
}

/** The edited route keeps everything its attachment, age order and mesh side depend on. */
function sameFrame(a: Obj<RouteSpecCommon>, b: Obj<RouteSpecCommon>): boolean {
  const x = a.metadata, y = b.metadata;
  return a.kind === b.kind && a.apiVersion === b.apiVersion && x.name === y.name &&
    x.namespace === y.namespace && x.creationTimestamp === y.creationTimestamp &&
    equalData(a.spec?.parentRefs, b.spec?.parentRefs) &&
    equalData(a.spec?.hostnames, b.spec?.hostnames) &&
    !(b.spec?.parentRefs ?? []).some(isMeshParent);
}

/** The two conversions need the very same clusters and report the very same name conflicts. */
function sameBackends(a: ConvertedRoute, b: ConvertedRoute): boolean {
  return a.clusters.length === b.clusters.length && a.conflicts.length === b.conflicts.length &&
    a.clusters.every((u, i) => {
      const v = b.clusters[i];
      const of = (c: typeof u) => c.imported ?? c.svc;
      return u.port === v.port && u.http2 === v.http2 && of(u) === of(v);
    }) &&
    a.conflicts.every((c, i) => c[0] === b.conflicts[i][0] && c[1] === b.conflicts[i][1]);
}

/** The result of an edit that qualifies, resolved on the last one (and remembered); else undefined. */
function editOnLast(
  objects: KubeObject[],
  options: ResolveOptions,
  state: ResolveState,
  changed: readonly number[],
): ResolveResult | undefined {
  const last = state.last.value!;
  const index = state.last.index();
  if (!index) return undefined;
  const defs = options.routeKinds ?? ROUTE_KINDS;
  const changes: Change[] = [];
  for (const i of changed) {
    const raw = objects[i], old = last.objects[i];
    if (typeof raw !== "object" || raw === null || raw.kind !== old.kind) return undefined;
    const def = defs.find((d) => d.kind === raw.kind);
    if (!def || def.chain !== "http" || typeof raw.metadata?.name !== "string") return undefined;
    const id = idOf(raw.kind, raw.metadata.namespace, raw.metadata.name);
    if (index.problemIds.has(id)) return undefined;
    const before = admitted(old, state) as Obj<RouteSpecCommon> | undefined;
    const after = admitted(raw, state) as Obj<RouteSpecCommon> | undefined;
    if (!before || !after || !sameFrame(before, after)) return undefined;
    const at = index.routes.get(id);
    // Without a Gateway parent of ours before, none now (same parentRefs): nothing to redo.
    if (at === undefined) continue;
    const was = last.routes[at];
    if (was.route !== before || was.converted.unsupported) return undefined;
    if (!was.parents.every((p) => p.accepted.ok)) return undefined;
    const converted = convertOnLast(state, def, after);
    if (converted.unsupported || !sameBackends(was.converted, converted)) return undefined;
    changes.push({ at, before: was, after: { ...was, route: after, converted } });
  }
  return applyChanges(objects, state, changes);
}

/** The clusters the routes of a virtual host forward or mirror to, sorted. */
const clustersOf = (vhost: IRVirtualHost) => [...vhostClusters(vhost)].sort().join(" ");

/**
 * Re-renders the changed routes' virtual hosts and remakes their statuses; remembers the result.
 * Undefined (nothing remembered) when a virtual host now forwards to other clusters (a weight
 * gone to 0 takes a cluster out of the IR).
 */
function applyChanges(
  objects: KubeObject[],
  state: ResolveState,
  changes: readonly Change[],
): ResolveResult | undefined {
  const last = state.last.value!;
  const index = state.last.index()!;
  const replaced = new Map<KubeObject, LastRoute>(changes.map((c) => [c.before.route, c.after]));
  const touched = [...new Set(changes.flatMap((c) => index.sitesOf.get(c.before.route) ?? []))];

  // The virtual hosts the changed routes sit in, rendered again from their new inputs.
  const listeners: IRListener[] = last.result.ir.listeners.slice();
  const copied = new Set<string>();
  const sites: { at: number; site: VhostSite }[] = [];
  for (const s of touched) {
    const site = last.sites[s];
    const inputs = site.inputs.map((input): VhostInput => {
      const r = replaced.get(input[0]);
      return r ? [r.route, r.converted, input[2]] : input;
    });
    const vhost = state.vhosts.render(
      site.listenerId,
      site.domain,
      site.context,
      inputs,
      renderVhost,
    );
    if (vhost !== site.vhost && clustersOf(vhost) !== clustersOf(site.vhost)) return undefined;
    const [li, ci, vi] = index.siteAt[s];
    if (!copied.has(`${li}`)) {
      copied.add(`${li}`);
      listeners[li] = { ...listeners[li], filterChains: listeners[li].filterChains.slice() };
    }
    const chains: IRFilterChain[] = listeners[li].filterChains;
    const chain = chains[ci];
    if (chain.kind === "http") {
      if (!copied.has(`${li}/${ci}`)) {
        copied.add(`${li}/${ci}`);
        chains[ci] = { ...chain, virtualHosts: chain.virtualHosts.slice() };
      }
      (chains[ci] as typeof chain).virtualHosts[vi] = vhost;
    }
    sites.push({ at: s, site: { ...site, inputs, vhost } });
  }

  // The changed routes' statuses, made again (their generation and conversion are new).
  const statuses = last.result.statuses.slice();
  const kindNames = (last.options.routeKinds ?? ROUTE_KINDS).map((k) => k.kind);
  for (const { after } of changes) {
    const side = {
      kind: after.kind,
      route: after.route,
      parents: after.parents,
      converted: after.converted,
    };
    const [made] = routeStatuses(
      kindNames,
      [{ controllerName: last.controllerName, routes: [side] }],
      last.now,
      state.statuses,
    );
    const id = idOf(after.kind, after.route.metadata.namespace, after.route.metadata.name);
    statuses[index.statusAt.get(id)!] = statusOf(after.route, made.status);
  }

  const result: ResolveResult = {
    ir: { ...last.result.ir, listeners },
    mesh: last.result.mesh,
    statuses,
    problems: last.result.problems.slice(),
  };
  // Remember: the new input and result, the changed routes and sites in their places.
  last.objects = objects.slice();
  last.result = result;
  for (const c of changes) {
    last.routes[c.at] = c.after;
    const at = index.sitesOf.get(c.before.route);
    index.sitesOf.delete(c.before.route);
    if (at) index.sitesOf.set(c.after.route, at);
  }
  for (const { at, site } of sites) last.sites[at] = site;
  return result;
}
