/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules: a candidate takes
 * the Lease only when it is free or its holder has not renewed it for `leaseDurationMs` as this
 * candidate observed it (local time since the record last changed, so clocks need not agree);
 * every update carries the resourceVersion read, so two candidates never both win; the leader
 * renews every `retryPeriodMs` and steps down when it could not renew for `renewDeadlineMs`.
 * @module
 */
import type { Logger } from "../log/mod.ts";
import { Registry } from "../metrics/mod.ts";
import { errorOf, type KubeClient } from "./client.ts";

/** Options of a LeaderElector (flags: --lease-*). */
export interface LeaseOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  /** This candidate (default: host name + random suffix). */
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  logger: Logger;
  metrics?: Registry;
  /** Clock (ms); default Date.now. */
  now?: () => number;
}

/** A Lease as aether reads and writes it. */
interface LeaseObject {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** MicroTime as the API server wants it: RFC 3339 with six fraction digits. */
export const microTime = (ms: number): string =>
  new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** Runs one candidate's election loop. */
export class LeaderElector {
  #leader = false;
  #stopped = false;
  #loop?: Promise<void>;
  #wake?: () => void;
  /** The record last seen and when (local clock) it last changed. */
  #observed?: { key: string; at: number };
  #lastRenew = 0;
  #onChange?: (leader: boolean) => void;
  readonly #now: () => number;
  readonly #leaderGauge;
  readonly #transitions;

  constructor(readonly options: LeaseOptions) {
    this.#now = options.now ?? Date.now;
    const m = options.metrics ?? new Registry();
    this.#leaderGauge = m.gauge("aether_leader", "1 while this process holds the leader Lease.");
    this.#transitions = m.counter(
      "aether_leader_transitions_total",
      "Times this process became or stopped being leader, by direction.",
    );
  }

  /** Whether this candidate holds the Lease now. */
  get isLeader(): boolean {
    return this.#leader;
  }

  /**
   * Starts the loop (returns at once). `onChange` is called with true when this candidate becomes
   * leader, false when it stops being one.
   */
  start(onChange?: (leader: boolean) => void): void {
    this.#onChange ??= onChange;
    this.#loop ??= this.#run();
  }

  /** Stops; with `release` (a graceful stop) the Lease is freed for the next candidate at once. */
  async stop(release = true): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#loop;
    if (release && this.#leader) {
      await this.#release().catch((e) =>
        this.options.logger.warn("releasing the Lease failed", { error: (e as Error).message })
      );
    }
    this.#set(false);
  }

  #path(name?: string): string {
    const o = this.options;
    const base = `/apis/coordination.k8s.io/v1/namespaces/${o.namespace}/leases`;
    return name ? `${base}/${name}` : base;
  }

  #set(leader: boolean): void {
    if (leader === this.#leader) return;
    this.#leader = leader;
    this.#leaderGauge.set(leader ? 1 : 0);
    this.#transitions.inc({ direction: leader ? "acquired" : "lost" });
    this.options.logger.info(leader ? "became leader" : "stopped being leader", {
      lease: `${this.options.namespace}/${this.options.name}`,
      identity: this.options.identity,
    });
    this.#onChange?.(leader);
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        const ok = await this.#tryAcquireOrRenew();
        if (ok) this.#lastRenew = this.#now();
        if (ok) this.#set(true);
        else if (this.#leader && this.#now() - this.#lastRenew > this.options.renewDeadlineMs) {
          this.#set(false);
        }
      } catch (e) {
        this.options.logger.warn("Lease update failed", { error: (e as Error).message });
        if (this.#leader && this.#now() - this.#lastRenew > this.options.renewDeadlineMs) {
          this.#set(false);
        }
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, this.options.retryPeriodMs);
        this.#wake = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  }

  /** One round: true when this candidate holds the Lease afterwards. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const o = this.options;
    const now = this.#now();
    const got = await o.client.request("GET", this.#path(o.name));
    const spec = {
      holderIdentity: o.identity,
      leaseDurationSeconds: Math.ceil(o.leaseDurationMs / 1000),
      renewTime: microTime(now),
    };
    if (got.status === 404) {
      const created = await o.client.request("POST", this.#path(), {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: o.name, namespace: o.namespace },
        spec: { ...spec, acquireTime: microTime(now), leaseTransitions: 0 },
      });
      if (created.status === 409) return false; // another candidate created it first
      if (created.status !== 201) throw errorOf(created, "creating the Lease");
      return true;
    }
    if (got.status !== 200) throw errorOf(got, "reading the Lease");
    const lease = got.json as LeaseObject;
    const key = JSON.stringify(lease.spec);
    if (this.#observed?.key !== key) this.#observed = { key, at: now };
    const holder = lease.spec.holderIdentity ?? "";
    const held = holder !== "" && holder !== o.identity;
    const duration = (lease.spec.leaseDurationSeconds ?? 0) * 1000;
    if (held && now < this.#observed.at + duration) {
      // Someone else holds it: a leader that lost it (it could not renew in time) stops at once.
      if (this.#leader) this.#set(false);
      return false;
    }
    const mine = holder === o.identity;
    const next: LeaseObject = {
      ...lease,
      spec: {
        ...lease.spec,
        ...spec,
        acquireTime: mine ? lease.spec.acquireTime : microTime(now),
        leaseTransitions: (lease.spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    const put = await o.client.request("PUT", this.#path(o.name), next);
    if (put.status === 409) return false; // someone else updated it in between
    if (put.status !== 200) throw errorOf(put, "updating the Lease");
    this.#observed = { key: JSON.stringify((put.json as LeaseObject).spec), at: now };
    return true;
  }

  async #release(): Promise<void> {
    const o = this.options;
    const got = await o.client.request("GET", this.#path(o.name));
    if (got.status !== 200) return;
    const lease = got.json as LeaseObject;
    if (lease.spec.holderIdentity !== o.identity) return;
    const put = await o.client.request("PUT", this.#path(o.name), {
      ...lease,
      spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1 },
    });
    if (put.status !== 200) throw errorOf(put, "releasing the Lease");
  }
}
