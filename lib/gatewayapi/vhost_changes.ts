/**
 * What the add and remove paths of resolve (add_edit.ts, remove_edit.ts) change on the last
 * result (state/last.ts) with: where each HTTP chain's rendered virtual hosts start among the
 * last sites, the IR chain a listener's routes sit in, the virtual hosts to insert, render again
 * or drop, put in place in copies of the listeners and chains they touch, the Gateways whose
 * `attachedRoutes` moved, and the new input and result remembered. Pure but for the last resolve
 * it is handed (its sites, listener counts and result are updated in place).
 * @module
 */
import { type GatewayState, gatewayStatus, type ListenerState } from "./gateways.ts";
import { compareHostnames } from "./hostnames.ts";
import { listenerHost } from "./build_ir.ts";
import { statusOf } from "./resolve.ts";
import type { ParentOutcome } from "./attachment.ts";
import { admitted } from "./edit_common.ts";
import { isMeshParent } from "./mesh/attachment.ts";
import type { Obj } from "./object_index.ts";
import { ROUTE_KINDS } from "./routes/registry.ts";
import type { RouteKindDef } from "./routes/kind.ts";
import type { ResolveOptions } from "./resolve_types.ts";
import type { RouteSpecCommon } from "./types.ts";
import type { LastResolve, ResolveState, VhostInput } from "./state/mod.ts";
import type { ListenerContext } from "./routes/kind.ts";
import type { ResolveResult } from "./resolve_types.ts";
import type { KubeObject } from "./types.ts";
import type { IR, IRHttpFilterChain, IRListener, IRVirtualHost } from "../ir/mod.ts";

/**
 * A virtual host to put in place: a new one (`op` "insert", `vi` its sorted position), one
 * rendered again ("render") or one no route places anything on any more ("remove").
 */
export interface VhostChange {
  li: number;
  ci: number;
  vi: number;
  op: "insert" | "render" | "remove";
  listenerId: string;
  domain: string;
  context: ListenerContext;
  inputs: VhostInput[];
  vhost: IRVirtualHost;
}
/**
 * Where each HTTP chain's sites start in `last.sites` (by `<listener>/<chain>` position): the
 * sites follow the IR's listeners, chains and virtual hosts in order. Undefined when the sites
 * are not as many as the IR's virtual hosts (then no add starts from it). (Not the edit path's
 * index: an add moves positions, and rebuilding that index costs ≈ 10 ms at 10k routes; it is
 * built again only when an edit needs it.)
 */
export function siteStarts(last: LastResolve): Map<string, number> | undefined {
  const starts = new Map<string, number>();
  let at = 0;
  last.result.ir.listeners.forEach((l, li) =>
    l.filterChains.forEach((c, ci) => {
      if (c.kind !== "http") return;
      starts.set(`${li}/${ci}`, at);
      at += c.virtualHosts.length;
    })
  );
  return at === last.sites.length ? starts : undefined;
}

/**
 * The last result with `ir` and `statuses` in its place (its mesh and problems as they were),
 * remembered as the last resolve of `objects`.
 */
export function rememberChanged(
  objects: KubeObject[],
  state: ResolveState,
  ir: IR,
  statuses: ResolveResult["statuses"],
): ResolveResult {
  const last = state.last.value!;
  const result = { ir, mesh: last.result.mesh, statuses, problems: last.result.problems.slice() };
  return remember(objects, state, result, true);
}

/** Records the new input and result as the last resolve (its index made again when moved). */
export function remember(
  objects: KubeObject[],
  state: ResolveState,
  result: ResolveResult,
  moved: boolean,
): ResolveResult {
  const last = state.last.value!;
  last.objects = objects.slice();
  last.result = result;
  if (moved) state.last.set(last);
  return result;
}

/** One IR HTTP chain the new route is placed on, and its hostnames there with their listeners. */
export interface ChainWant {
  li: number;
  ci: number;
  /** The listeners sharing the chain, most specific hostname first (build_ir.ts's owners). */
  group: ListenerState[];
  domains: Map<string, ListenerState[]>;
}

/**
 * The chain of `l` on the IR listener `address:port` (its HTTP chain, or its own HTTPS chain),
 * from `wanted` or added to it; undefined when the IR does not hold it as expected.
 */
export function chainWant(
  last: LastResolve,
  l: ListenerState,
  address: string,
  wanted: Map<string, ChainWant>,
): ChainWant | undefined {
  const ir = last.result.ir.listeners;
  const li = ir.findIndex((x) => x.name === `${address}:${l.listener.port}`);
  if (li < 0) return undefined;
  const https = ir[li].protocol === "HTTPS";
  const ci = https ? ir[li].filterChains.findIndex((c) => c.name === l.id) : 0;
  if (ir[li].filterChains[ci]?.kind !== "http") return undefined;
  const k = `${li}/${ci}`;
  let want = wanted.get(k);
  if (want) return want;
  const group = https
    ? [l]
    : last.gateways.flatMap((g) => g.listeners).filter((x) =>
      x.programmed && x.listener.port === l.listener.port && x.addresses.includes(address)
    ).sort((a, b) => compareHostnames(listenerHost(a), listenerHost(b)));
  wanted.set(k, want = { li, ci, group, domains: new Map() });
  return want;
}
/**
 * The IR listeners with `changes` in place (copies of the listeners and chains they touch), and
 * `last.sites` with them: re-rendered sites replaced, new ones inserted (last position first, so
 * earlier positions hold).
 */
export function applyVhosts(
  last: LastResolve,
  starts: ReadonlyMap<string, number>,
  changes: readonly VhostChange[],
): IRListener[] {
  const listeners = last.result.ir.listeners.slice();
  const chains = new Map<string, IRHttpFilterChain>();
  const copied = new Set<number>();
  const chainOf = (li: number, ci: number) => {
    const k = `${li}/${ci}`;
    let chain = chains.get(k);
    if (chain) return chain;
    if (!copied.has(li)) {
      copied.add(li);
      listeners[li] = { ...listeners[li], filterChains: listeners[li].filterChains.slice() };
    }
    chain = { ...listeners[li].filterChains[ci] as IRHttpFilterChain };
    chain.virtualHosts = chain.virtualHosts.slice();
    listeners[li].filterChains[ci] = chain;
    chains.set(k, chain);
    return chain;
  };
  // Last position first (a later chain's, then within a chain: a re-render before an insertion
  // at its position, insertions at one position in reverse hostname order), so the positions of
  // what comes earlier hold.
  const order = (a: VhostChange, b: VhostChange) =>
    b.li - a.li || b.ci - a.ci || b.vi - a.vi || Number(a.op === "insert") -
      Number(b.op === "insert") ||
    compareHostnames(b.domain, a.domain);
  for (const c of [...changes].sort(order)) {
    const chain = chainOf(c.li, c.ci);
    const at = starts.get(`${c.li}/${c.ci}`)! + c.vi;
    const site = { listenerId: c.listenerId, domain: c.domain, context: c.context };
    if (c.op === "insert") {
      chain.virtualHosts.splice(c.vi, 0, c.vhost);
      last.sites.splice(at, 0, { ...site, inputs: c.inputs, vhost: c.vhost });
    } else if (c.op === "remove") {
      chain.virtualHosts.splice(c.vi, 1);
      last.sites.splice(at, 1);
    } else {
      chain.virtualHosts[c.vi] = c.vhost;
      last.sites[at] = { ...last.sites[at], inputs: c.inputs, vhost: c.vhost };
    }
  }
  return listeners;
}
/**
 * Moves `attachedRoutes` of each listener in `listeners` by `delta` (a route placed on it, or
 * gone) and puts their Gateways' statuses, made again, in their places in `statuses`.
 */
export function recountAttached(
  last: LastResolve,
  statuses: ResolveResult["statuses"],
  listeners: Iterable<ListenerState>,
  delta: 1 | -1,
): void {
  const touched = new Set<GatewayState>();
  for (const l of listeners) {
    l.attachedRoutes += delta;
    touched.add(last.gateways.find((g) => g.listeners.includes(l))!);
  }
  for (const g of touched) {
    const at = statuses.findIndex((s) =>
      s.kind === "Gateway" && s.namespace === g.gateway.metadata.namespace &&
      s.name === g.gateway.metadata.name
    );
    statuses[at] = statusOf(g.gateway, gatewayStatus(g, last.now));
  }
}

/**
 * A route's placements from its parents' outcomes: one per listener, its hostnames there merged
 * (as resolve makes them); then per IR chain of a programmed listener, each hostname with the
 * listeners that place the route on it. Undefined when a listener is not the last resolve's, a
 * placement's hostnames are not all exact (a wildcard or catch-all route reaches every virtual
 * host it covers), or the IR does not hold a chain as expected.
 */
export function exactPlacements(
  last: LastResolve,
  parents: readonly ParentOutcome[],
): { placements: Map<ListenerState, string[]>; wanted: Map<string, ChainWant> } | undefined {
  const listenerById = new Map(last.gateways.flatMap((g) => g.listeners).map((l) => [l.id, l]));
  const placements = new Map<ListenerState, string[]>();
  for (const p of parents) {
    for (const a of p.attachments) {
      const l = listenerById.get(a.listenerId);
      if (!l) return undefined;
      placements.set(l, [...new Set([...placements.get(l) ?? [], ...a.hostnames])]);
    }
  }
  const wanted = new Map<string, ChainWant>();
  for (const [l, hostnames] of placements) {
    if (!l.programmed) continue;
    if (hostnames.length === 0 || hostnames.some((h) => h.includes("*"))) return undefined;
    for (const address of l.addresses) {
      const want = chainWant(last, l, address, wanted);
      if (!want) return undefined;
      for (const h of hostnames) want.domains.set(h, [...want.domains.get(h) ?? [], l]);
    }
  }
  return { placements, wanted };
}

/**
 * `raw` as the add and remove paths take it: an HTTP-chain route (HTTPRoute, GRPCRoute) of the
 * options' route kinds, admitted cleanly, with no Service parent, on Gateways whose routes are all
 * of its kind (no cross-kind hostname conflict); `same` tells an object of its kind, namespace and
 * name. Undefined for anything else (resolved cold).
 */
export function chainRoute(
  raw: KubeObject,
  options: ResolveOptions,
  state: ResolveState,
):
  | { def: RouteKindDef; route: Obj<RouteSpecCommon>; same: (o: KubeObject) => boolean }
  | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const def = (options.routeKinds ?? ROUTE_KINDS).find((d) => d.kind === raw.kind);
  if (!def || def.chain !== "http" || typeof raw.metadata?.name !== "string") return undefined;
  const route = admitted(raw, state) as Obj<RouteSpecCommon> | undefined;
  if (!route || (route.spec?.parentRefs ?? []).some(isMeshParent)) return undefined;
  if (!state.last.value!.routes.every((r) => r.kind === def.kind)) return undefined;
  const { name, namespace } = route.metadata;
  const same = (o: KubeObject) =>
    o.kind === def.kind && o.metadata?.name === name &&
    (o.metadata.namespace ?? "default") === namespace;
  return { def, route, same };
}
