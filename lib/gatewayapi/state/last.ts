/**
 * The last resolve of one resolver, kept for the edit path (edit.ts): its input and options, its
 * result, and what an edit of a few routes needs to resolve again on top of it — the settled edge
 * routes, the conversion context and Backends they were converted with, every rendered virtual
 * host with its inputs — plus indexes into them, built on the first edit after a cold resolve.
 * Owned by a ResolveState (its `last`): a cold resolve replaces it, an edit updates it.
 * @module
 */
import type { AdmissionKinds } from "../admission/mod.ts";
import type { ParentOutcome } from "../attachment.ts";
import type { Backends } from "../backends.ts";
import type { ConvertContext } from "./convert.ts";
import type { AttachContext } from "./attach.ts";
import type { GatewayState } from "../gateways.ts";
import type { ConvertedRoute, RouteKind } from "../routes/kind.ts";
import type { Obj, ObjectIndex } from "../object_index.ts";
import type { ResolveOptions, ResolveResult } from "../resolve_types.ts";
import type { KubeObject, RouteSpecCommon } from "../types.ts";
import type { VhostSite } from "./vhost.ts";

/** One route with Gateway parents, as the last resolve settled and converted it. */
export interface LastRoute {
  readonly kind: RouteKind;
  readonly route: Obj<RouteSpecCommon>;
  readonly parents: readonly ParentOutcome[];
  readonly converted: ConvertedRoute;
}

/** What the last resolve was given, what it returned, and what it was made of. */
export interface LastResolve {
  /** The input (a copy: the caller's array may change). */
  objects: readonly KubeObject[];
  /** The options (an edit needs the same ones, key by key). */
  readonly options: ResolveOptions;
  result: ResolveResult;
  /** The admission table the input was admitted with. */
  readonly admission: AdmissionKinds;
  readonly backends: Backends;
  readonly context: ConvertContext;
  /** The objects indexed, the Gateways evaluated and the attachment context (the add path). */
  readonly indexed: ObjectIndex;
  readonly gateways: readonly GatewayState[];
  readonly attached: AttachContext;
  readonly controllerName: string;
  readonly now: string;
  /** The routes with Gateway parents, settled (conflicts, unsupported features). */
  readonly routes: LastRoute[];
  /** Every rendered virtual host, in the order of `result.ir`'s listeners, chains, hosts. */
  readonly sites: VhostSite[];
}

/** Where things are in a {@link LastResolve}, by `<kind>/<namespace>/<name>` ({@link idOf}). */
export interface LastIndex {
  /** Position in `routes`. */
  readonly routes: Map<string, number>;
  /** The positions in `sites` of the virtual hosts each route is an input of. */
  readonly sitesOf: Map<KubeObject, number[]>;
  /** Per site: its listener, filter chain and virtual host positions in `result.ir`. */
  readonly siteAt: readonly (readonly [number, number, number])[];
  /** Position of each object's status in `result.statuses`. */
  readonly statusAt: Map<string, number>;
  /** The objects some problem is about. */
  readonly problemIds: Set<string>;
}

/** `<kind>/<namespace>/<name>` of an object (or of a problem or status naming one). */
export const idOf = (kind: string, namespace: string | undefined, name: string): string =>
  `${kind}/${namespace ?? ""}/${name}`;

/** The last resolve of one resolver, and its index once an edit needed it. */
export class LastMemo {
  #last: LastResolve | undefined;
  #index: LastIndex | undefined;

  /** The last resolve, if one completed. */
  get value(): LastResolve | undefined {
    return this.#last;
  }

  /** Remembers a cold resolve (its index is built when an edit first needs it). */
  set(last: LastResolve): void {
    this.#last = last;
    this.#index = undefined;
  }

  /**
   * The index of the last resolve; undefined when there is none or its recorded virtual hosts are
   * not exactly those of its IR (then no edit can start from it).
   */
  index(): LastIndex | undefined {
    const last = this.#last;
    if (!last) return undefined;
    return this.#index ??= buildIndex(last);
  }
}

function buildIndex(last: LastResolve): LastIndex | undefined {
  const siteAt: [number, number, number][] = [];
  last.result.ir.listeners.forEach((l, li) =>
    l.filterChains.forEach((c, ci) => {
      if (c.kind === "http") c.virtualHosts.forEach((_, vi) => siteAt.push([li, ci, vi]));
    })
  );
  if (siteAt.length !== last.sites.length) return undefined;
  const sitesOf = new Map<KubeObject, number[]>();
  for (const [i, site] of last.sites.entries()) {
    const [li, ci, vi] = siteAt[i];
    const chain = last.result.ir.listeners[li].filterChains[ci];
    if (chain.kind !== "http" || chain.virtualHosts[vi] !== site.vhost) return undefined;
    for (const [route] of site.inputs) {
      const list = sitesOf.get(route);
      if (list) list.push(i);
      else sitesOf.set(route, [i]);
    }
  }
  const routes = new Map<string, number>();
  for (const [i, r] of last.routes.entries()) {
    routes.set(idOf(r.kind, r.route.metadata.namespace, r.route.metadata.name), i);
  }
  const statusAt = new Map<string, number>();
  for (const [i, s] of last.result.statuses.entries()) {
    statusAt.set(idOf(s.kind, s.namespace, s.name), i);
  }
  const problemIds = new Set(last.result.problems.map((p) => idOf(p.kind, p.namespace, p.name)));
  return { routes, sitesOf, siteAt, statusAt, problemIds };
}
