/**
 * Incremental ADS (`DeltaAggregatedResources`): the server tracks which version of each resource
 * the client has and sends only changed resources plus `removed_resources`. Subscription changes
 * are applied from every request; ACK/NACK only when the nonce is the outstanding one.
 * @module
 */
import { TypeUrl } from "../proto.ts";
import { AdsStream, emptyIsWildcard, type StreamDeps, type TypeState } from "./stream.ts";
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse, DeltaResource } from "./service.ts";
import { vhdsAliases, vhdsNamespace, vhdsSelect } from "./vhds.ts";

/**
 * Whether a type's first request without names is a (legacy) wildcard subscription: those of
 * {@link emptyIsWildcard}, and VHDS, which Envoy 1.40 opens with no names (measured) and expects
 * every virtual host of its route configurations from.
 */
const legacyWildcard = (typeUrl: string): boolean =>
  emptyIsWildcard(typeUrl) || typeUrl === TypeUrl.virtualHost;

/** One delta ADS stream. `send` writes a response to the client. */
export class DeltaStream extends AdsStream {
  readonly mode = "delta" as const;
  #responded = new Set<string>();
  /** Per type: subscribed names already announced as not existing (in removed_resources). */
  #absent = new Map<string, Set<string>>();
  /** Per type: names the on-demand handler is still working on (not announced as missing yet). */
  #pending = new Map<string, Set<string>>();
  /** VHDS: route configurations whose virtual hosts this stream has started sending. */
  #vhdsOpened = new Set<string>();
  /**
   * Per type: names to hand to the on-demand handler once the node has a snapshot. A client that
   * reconnects to a restarted agent before its first snapshot asks for what it holds; the
   * handler cannot place those names yet (it knows no such node), so they wait here.
   */
  #deferred = new Map<string, Set<string>>();

  constructor(deps: StreamDeps, private readonly send: (res: DeltaDiscoveryResponse) => void) {
    super(deps);
  }

  /** Handles one DeltaDiscoveryRequest. */
  handle(req: DeltaDiscoveryRequest): void {
    const typeUrl = req.type_url ?? "";
    if (!typeUrl) {
      this.deps.logger.warn("delta request without type_url ignored", { node: this.nodeId });
      return;
    }
    if (!this.attach(req.node)) return;
    const fresh = !this.types.has(typeUrl);
    const st = this.state(typeUrl);
    const nonce = req.response_nonce ?? "";
    if (nonce) this.settle(typeUrl, st, nonce, req.error_detail);
    const subscribe = req.resource_names_subscribe ?? [];
    if (fresh) {
      for (const [name, version] of Object.entries(req.initial_resource_versions ?? {})) {
        st.known.set(name, version);
      }
      if (legacyWildcard(typeUrl) && subscribe.length === 0) st.wildcard = true;
    }
    for (const name of subscribe) {
      if (name === "*") st.wildcard = true;
      else {
        st.names.add(name);
        // Asked again: announce it again if it is still missing (the client is waiting).
        this.#absent.get(typeUrl)?.delete(name);
      }
    }
    st.memo = undefined;
    for (const name of req.resource_names_unsubscribe ?? []) {
      if (name === "*") st.wildcard = false;
      else {
        st.names.delete(name);
        this.#absent.get(typeUrl)?.delete(name);
        if (!st.wildcard) st.known.delete(name);
      }
    }
    // A fresh stream from an Envoy that already has resources (it reconnected, e.g. to a
    // restarted agent) also asks for what it has: the on-demand handler re-learns the node's
    // dependency set, so nothing the client holds is removed and the resync changes nothing.
    const known = fresh ? Object.keys(req.initial_resource_versions ?? {}) : [];
    this.#askOnDemand(typeUrl, known.length ? [...subscribe, ...known] : subscribe);
    this.pump();
  }

  /**
   * Before sending anything of a snapshot, hands the names deferred while there was none to the
   * on-demand handler: what the client holds joins the node's demand before the first push, so
   * that push neither removes it nor misses a changed version of it.
   */
  protected override pump(): void {
    if (this.snapshot && this.#deferred.size) {
      const deferred = [...this.#deferred];
      this.#deferred.clear();
      for (const [typeUrl, names] of deferred) {
        for (const n of names) this.#pending.get(typeUrl)?.delete(n);
        this.#askOnDemand(typeUrl, [...names]);
      }
    }
    super.pump();
  }

  /** Hands subscribed names the snapshot lacks to the on-demand handler, if there is one. */
  #askOnDemand(typeUrl: string, subscribe: readonly string[]): void {
    const onDemand = this.deps.onDemand;
    if (!onDemand) return;
    const items = this.snapshot?.resources(typeUrl).items;
    let pending = this.#pending.get(typeUrl);
    if (!pending) this.#pending.set(typeUrl, pending = new Set());
    if (!this.snapshot) {
      // No snapshot for the node yet (the agent is still starting): ask once there is one, and
      // until then announce none of these names as missing.
      let deferred = this.#deferred.get(typeUrl);
      if (!deferred) this.#deferred.set(typeUrl, deferred = new Set());
      for (const n of subscribe) {
        if (n === "*") continue;
        deferred.add(n);
        pending.add(n);
      }
      return;
    }
    // VHDS: a route configuration's own name is a namespace, not a resource; an alias is had
    // when a virtual host serves it.
    const vhds = typeUrl === TypeUrl.virtualHost;
    const aliases = vhds && this.snapshot ? vhdsAliases(this.snapshot) : undefined;
    const has = (n: string) =>
      !!items?.has(n) || (vhds && (!n.includes("/") || !!aliases?.has(n.toLowerCase())));
    const names = [...new Set(subscribe)].filter((n) => n !== "*" && !has(n) && !pending.has(n))
      .sort();
    if (names.length === 0) return;
    for (const n of names) pending.add(n);
    const done = () => {
      for (const n of names) pending.delete(n);
      this.pump();
    };
    this.deps.logger.info("on-demand request", { node: this.nodeId, type_url: typeUrl, names });
    let result: void | Promise<void>;
    try {
      result = onDemand(this.nodeId, typeUrl, names);
    } catch (e) {
      this.deps.logger.error("on-demand handler failed", { node: this.nodeId, error: String(e) });
      result = undefined;
    }
    if (result instanceof Promise) {
      result.catch((e) =>
        this.deps.logger.error("on-demand handler failed", { node: this.nodeId, error: String(e) })
      ).finally(done);
    } else {
      // Synchronous: the new snapshot (if any) is set; the pump that follows in handle() sends.
      for (const n of names) pending.delete(n);
    }
  }

  /**
   * Sends new and changed resources, and in removed_resources both the resources the client has
   * that are gone and the subscribed names that do not exist (so the client stops waiting).
   */
  protected push(typeUrl: string, st: TypeState): void {
    if (!this.subscribed(st)) return;
    if (typeUrl === TypeUrl.virtualHost) return this.#pushVhds(st);
    const firstResponse = !this.#responded.has(typeUrl);
    const selected = this.selected(typeUrl, st);
    const selectedNames = new Set(selected.map((r) => r.name));
    const fresh = selected.filter((r) => st.known.get(r.name) !== r.hash);
    const resources: DeltaResource[] = fresh
      .map((r) => ({
        name: r.name,
        version: r.hash,
        resource: { type_url: r.typeUrl, value: r.value },
      }));
    let absent = this.#absent.get(typeUrl);
    if (!absent) this.#absent.set(typeUrl, absent = new Set());
    // A name the on-demand handler is still working on is neither gone nor missing yet.
    const pending = this.#pending.get(typeUrl);
    const gone = [...st.known.keys()].filter((n) => !selectedNames.has(n) && !pending?.has(n));
    // Named subscriptions count on top of a wildcard too (on-demand CDS beside wildcard CDS).
    const missing = [...st.names].filter((n) =>
      !selectedNames.has(n) && !st.known.has(n) && !absent.has(n) && !pending?.has(n)
    );
    const removed = [...gone, ...missing].sort();
    if (resources.length === 0 && removed.length === 0 && !firstResponse) return;
    for (const r of resources) {
      st.known.set(r.name, r.version);
      absent.delete(r.name);
    }
    for (const n of removed) {
      st.known.delete(n);
      if (st.names.has(n)) absent.add(n);
    }
    if (typeUrl === TypeUrl.cluster) this.resendEndpointsOf(fresh);
    this.#respond(typeUrl, st, resources, removed);
  }

  #respond(typeUrl: string, st: TypeState, resources: DeltaResource[], removed: string[]): void {
    this.#responded.add(typeUrl);
    const version = this.currentVersion(typeUrl, st);
    const nonce = this.nextNonce();
    this.sent(typeUrl, st, version, nonce);
    this.send({
      system_version_info: version,
      type_url: typeUrl,
      nonce,
      resources,
      removed_resources: removed,
    });
  }

  /**
   * VHDS: like {@link push}, but an alias the client subscribed to (`<route config>/<host>`, a
   * request paused on it) is answered once per subscription: with the virtual host serving the
   * host, listing the alias in `aliases` (sent again even when unchanged: the request waits for
   * the alias), or, when none does, with an empty resource named by the alias ("not found";
   * Envoy ignores removed_resources for this).
   */
  #pushVhds(st: TypeState): void {
    const typeUrl = TypeUrl.virtualHost;
    const firstResponse = !this.#responded.has(typeUrl);
    const items = this.snapshot?.resources(typeUrl).items ?? new Map();
    const open = this.vhdsOpen();
    const snapshot = this.snapshot;
    const index = snapshot ? () => vhdsAliases(snapshot) : undefined;
    const { selected, answers, unresolved } = vhdsSelect(items, st.names, st.wildcard, open, index);
    let answered = this.#absent.get(typeUrl);
    if (!answered) this.#absent.set(typeUrl, answered = new Set());
    const pending = this.#pending.get(typeUrl);
    const ask = (names: readonly string[]) => names.filter((n) => !answered.has(n));
    const resources: DeltaResource[] = selected
      .filter((r) => st.known.get(r.name) !== r.hash || ask(answers.get(r.name) ?? []).length)
      .map((r) => {
        const aliases = (answers.get(r.name) ?? []).filter((n) => n !== r.name);
        return {
          name: r.name,
          version: r.hash,
          resource: { type_url: r.typeUrl, value: r.value },
          ...(aliases.length ? { aliases } : {}),
        };
      });
    const notFound = ask(unresolved).filter((n) => !pending?.has(n));
    const selectedNames = new Set(selected.map((r) => r.name));
    const removed = [...st.known.keys()].filter((n) => !selectedNames.has(n) && !pending?.has(n));
    // A namespace newly watched without a virtual host gets a no-op removal `<rc>/`: Envoy's VHDS
    // init waits for an update reaching its namespace, and an empty response reaches none.
    const fresh = [...open].filter((ns) => !this.#vhdsOpened.has(ns));
    const used = new Set(selected.map((r) => vhdsNamespace(r.name)));
    removed.push(...fresh.filter((ns) => !used.has(ns)).map((ns) => `${ns}/`));
    removed.sort();
    if (resources.length + notFound.length + removed.length === 0 && !firstResponse) return;
    for (const r of resources) {
      st.known.set(r.name, r.version);
      for (const a of answers.get(r.name) ?? []) answered.add(a);
    }
    for (const n of notFound) answered.add(n);
    for (const n of removed) st.known.delete(n);
    for (const ns of fresh) this.#vhdsOpened.add(ns);
    const empty = notFound.map((n) => ({ name: n, version: "", aliases: [n] }));
    // Envoy rejects a response naming one resource both as added and removed.
    const added = new Set([...resources, ...empty].map((r) => r.name));
    this.#respond(typeUrl, st, [...resources, ...empty], removed.filter((n) => !added.has(n)));
  }
}
