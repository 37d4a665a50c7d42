/**
 * The SVIDs of every workload identity on a node, from the SPIRE agent's Delegated Identity API:
 * one subscription per identity (shared by every pod that has it), opened when the first pod
 * with that identity appears and closed when the last one goes; plus one bundles subscription.
 *
 * While SPIRE is away the last SVIDs and bundles stay in use until they expire: the gauge
 * `aether_identity_svid_expiry_seconds` counts down per identity and a warning names what expires
 * when, every `countdownMs`. An SVID is dropped at its expiry (a timer per SVID; the countdown
 * tick catches a clock that jumped) rather than served: the node is then translated without the
 * identity (no inbound listeners, refusing caller clusters), so Envoy holds no certificate of it
 * and closes the connections that used it.
 *
 * A SPIRE server the node's SPIRE agent cannot reach shows only as SVIDs that are not renewed
 * (the agent keeps its streams up and serves its cache): past two thirds of an SVID's lifetime
 * (SPIRE renews at half) `aether_identity_svid_renewal_overdue` turns 1 for it and a warning says
 * so, once, until a new SVID arrives.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Registry } from "../../lib/metrics/mod.ts";
import { DelegatedIdentityClient, type Subscription } from "./delegated.ts";
import type { Selector } from "./proto.ts";
import type { Svid, TrustBundle } from "./svid.ts";
import { SvidHealth } from "./svid_health.ts";

/** An identity a node needs: the SPIFFE ID its pods must have and the selectors to ask with. */
export interface WantedIdentity {
  spiffeId: string;
  selectors: Selector[];
}

/** Options of {@link NodeIdentities}. */
export interface NodeIdentitiesOptions {
  /** The SPIRE agent's admin socket. */
  adminSocket: string;
  logger: Logger;
  metrics: Registry;
  /** Called (synchronously) after any SVID or bundle changed. */
  onChange(): void;
  /** Countdown log and gauge period while SPIRE is away. Default 10 s. */
  countdownMs?: number;
  /** Injected clock (ms). */
  now?: () => number;
}

interface Held {
  wanted: WantedIdentity;
  sub: Subscription;
  svid?: Svid;
  /** Drops `svid` at its expiry. */
  expiry?: ReturnType<typeof setTimeout>;
}

/** setTimeout's longest delay (a longer one fires at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** Per-node SVID subscriptions; see the module doc. */
export class NodeIdentities {
  readonly #client: DelegatedIdentityClient;
  readonly #held = new Map<string, Held>();
  readonly #bundleSub: Subscription;
  #bundles: TrustBundle[] = [];
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #now: () => number;
  readonly #health: SvidHealth;
  readonly #connected;
  readonly #updates;

  constructor(readonly o: NodeIdentitiesOptions) {
    this.#now = o.now ?? Date.now;
    this.#client = new DelegatedIdentityClient(o.adminSocket, o.logger);
    this.#health = new SvidHealth(o.metrics, o.logger);
    this.#connected = o.metrics.gauge(
      "aether_identity_spire_connected",
      "1 while the Delegated Identity streams are up (bundles stream), else 0.",
    );
    this.#updates = o.metrics.counter(
      "aether_identity_svid_updates_total",
      "SVIDs received from SPIRE, by identity.",
    );
    this.#bundleSub = this.#client.subscribeBundles({
      onUpdate: (b) => {
        if (JSON.stringify(b) === JSON.stringify(this.#bundles)) return;
        this.#bundles = b;
        o.logger.info("trust bundles", { trustDomains: b.map((x) => x.trustDomain) });
        o.onChange();
      },
      onState: (up) => this.#connected.set(up ? 1 : 0),
    });
    this.#timer = setInterval(() => this.#tick(), o.countdownMs ?? 10_000);
  }

  /**
   * Sets the identities the node's pods have. New ones are subscribed to, gone ones closed and
   * forgotten. Returns true when an SVID was dropped (the caller re-translates).
   */
  setWanted(wanted: readonly WantedIdentity[]): boolean {
    const next = new Map(wanted.map((w) => [w.spiffeId, w]));
    let dropped = false;
    for (const [id, h] of this.#held) {
      if (next.has(id)) continue;
      h.sub.close();
      clearTimeout(h.expiry);
      this.#held.delete(id);
      this.#health.clear(id);
      dropped ||= h.svid !== undefined;
    }
    for (const [id, w] of next) {
      if (this.#held.has(id)) continue;
      const held: Held = { wanted: w, sub: undefined as unknown as Subscription };
      this.#held.set(id, held);
      held.sub = this.#client.subscribeSvids(w.selectors, {
        onUpdate: (svids) => this.#update(held, svids),
      });
    }
    return dropped;
  }

  /** The SVID in use for `spiffeId`, if any (unexpired). */
  svid(spiffeId: string): Svid | undefined {
    return this.#held.get(spiffeId)?.svid;
  }

  /** Every SVID in use, sorted by SPIFFE ID. */
  svids(): Svid[] {
    return [...this.#held.values()].flatMap((h) => h.svid ? [h.svid] : [])
      .sort((a, b) => a.spiffeId < b.spiffeId ? -1 : a.spiffeId > b.spiffeId ? 1 : 0);
  }

  /** The trust bundles in use, sorted by trust domain. */
  bundles(): TrustBundle[] {
    return this.#bundles;
  }

  /** Why nothing can be served over mTLS yet (no trust bundle), or undefined once one is here. */
  waiting(): string | undefined {
    if (this.#bundles.length) return undefined;
    return `waiting for the SPIRE agent's trust bundle on ${this.o.adminSocket} (is the ` +
      "spire-agent pod of this node Ready, and this agent in its authorized_delegates?)";
  }

  /** True while the bundles stream is up (a proxy for the admin socket being reachable). */
  get connected(): boolean {
    return this.#bundleSub.connected;
  }

  #update(held: Held, svids: Svid[]): void {
    const id = held.wanted.spiffeId;
    const mine = svids.find((s) => s.spiffeId === id);
    if (!mine && svids.length === 0) {
      this.o.logger.info(
        "no SVID from SPIRE yet for these selectors (entry not synced or not registered)",
        {
          spiffeId: id,
          selectors: held.wanted.selectors.map((s) => `${s.type}:${s.value}`),
        },
      );
      return;
    }
    if (!mine) {
      this.o.logger.error(
        "SPIRE returned no SVID with the expected SPIFFE ID for these selectors; register an entry with this ID and selectors",
        {
          spiffeId: id,
          selectors: held.wanted.selectors.map((s) => `${s.type}:${s.value}`),
          got: svids.map((s) => s.spiffeId),
        },
      );
      return;
    }
    if (held.svid?.certChainPem === mine.certChainPem) return;
    held.svid = mine;
    this.#scheduleExpiry(held);
    this.#updates.inc({ spiffe_id: id });
    this.#health.observe(mine, this.#now());
    this.o.logger.info("SVID", { spiffeId: id, expiresAt: new Date(mine.expiresAt).toISOString() });
    this.o.onChange();
  }

  /** Arms the timer that drops `held.svid` at its expiry. */
  #scheduleExpiry(held: Held): void {
    clearTimeout(held.expiry);
    const left = held.svid ? held.svid.expiresAt - this.#now() : MAX_DELAY_MS;
    held.expiry = setTimeout(() => {
      if (this.#drop(held)) this.o.onChange();
      else if (held.svid) this.#scheduleExpiry(held);
    }, Math.min(Math.max(0, left), MAX_DELAY_MS));
  }

  /** Drops `held.svid` if it has expired; returns true when it did. */
  #drop(held: Held): boolean {
    if (!held.svid || held.svid.expiresAt > this.#now()) return false;
    const id = held.wanted.spiffeId;
    this.o.logger.error("SVID expired and SPIRE sent no new one; identity dropped", {
      spiffeId: id,
      expiredAt: new Date(held.svid.expiresAt).toISOString(),
    });
    held.svid = undefined;
    clearTimeout(held.expiry);
    this.#health.clear(id);
    return true;
  }

  /** Countdown while SPIRE is away; drops SVIDs that expired (a clock that jumped past them). */
  #tick(): void {
    const now = this.#now();
    let changed = false;
    for (const [id, h] of this.#held) {
      if (!h.svid) continue;
      const left = Math.round((h.svid.expiresAt - now) / 1000);
      if (this.#drop(h)) {
        changed = true;
        continue;
      }
      this.#health.observe(h.svid, now);
      if (!h.sub.connected) {
        this.o.logger.warn("SPIRE unreachable; keeping the last SVID until it expires", {
          spiffeId: id,
          expiresInSeconds: left,
        });
      }
    }
    if (changed) this.o.onChange();
  }

  close(): void {
    clearInterval(this.#timer);
    for (const h of this.#held.values()) {
      h.sub.close();
      clearTimeout(h.expiry);
    }
    this.#held.clear();
    this.#bundleSub.close();
    this.#client.close();
  }
}
