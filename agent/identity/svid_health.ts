/**
 * What a process says about the SVIDs it serves, the node agent's and the edge's alike: the
 * seconds until each expires (`aether_identity_svid_expiry_seconds`) and whether its renewal is
 * overdue (`aether_identity_svid_renewal_overdue`: past two thirds of its lifetime without a
 * successor — SPIRE renews at half — the sign of a SPIRE server the SPIRE agent cannot reach,
 * since the agent keeps its streams up and serves its cache), with one warning per SVID.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Gauge, Registry } from "../../lib/metrics/mod.ts";
import { renewalOverdue, type Svid } from "./svid.ts";

/** The SVID gauges of one process; see the module doc. */
export class SvidHealth {
  readonly #expiry: Gauge;
  readonly #overdue: Gauge;
  /** The certificate chain each identity's overdue warning was given for. */
  readonly #warned = new Map<string, string>();

  constructor(metrics: Registry, readonly logger: Logger) {
    this.#expiry = metrics.gauge(
      "aether_identity_svid_expiry_seconds",
      "Seconds until the SVID in use for an identity expires.",
    );
    this.#overdue = metrics.gauge(
      "aether_identity_svid_renewal_overdue",
      "1 while an identity's SVID is past two thirds of its lifetime without a renewal " +
        "(SPIRE server unreachable?), else 0.",
    );
  }

  /** Updates the gauges of `svid` at `now`; warns once per SVID when its renewal is overdue. */
  observe(svid: Svid, now: number): void {
    const id = svid.spiffeId;
    const left = Math.max(0, Math.round((svid.expiresAt - now) / 1000));
    this.#expiry.set(left, { spiffe_id: id });
    const overdue = renewalOverdue(svid, now);
    this.#overdue.set(overdue ? 1 : 0, { spiffe_id: id });
    if (!overdue || this.#warned.get(id) === svid.certChainPem) return;
    this.#warned.set(id, svid.certChainPem);
    this.logger.warn(
      "SVID not renewed past two thirds of its lifetime: the SPIRE agent cannot get a new one " +
        "(is the spire-server pod running and reachable from this node's spire-agent?); the " +
        "last SVID serves until it expires",
      { spiffeId: id, expiresInSeconds: left },
    );
  }

  /** The identity has no SVID in use any more (expired and dropped, or no longer wanted). */
  clear(spiffeId: string): void {
    this.#expiry.set(0, { spiffe_id: spiffeId });
    this.#overdue.set(0, { spiffe_id: spiffeId });
    this.#warned.delete(spiffeId);
  }
}
