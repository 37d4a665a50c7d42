/**
 * How much of each snapshot was encoded anew: `aether_xds_resources_encoded_total{type_url}`
 * counts resources encoded to protobuf (the encode memo's misses: a new or changed resource),
 * `aether_xds_resources_reused_total{type_url}` resources put in a snapshot with the encoding an
 * earlier snapshot of the same stream made (hits: unchanged, the same object). After a one-route
 * edit at the edge the first grows by one VirtualHost; a growth by the table's size means the
 * reuse (agent/xds/cache/reuse.ts) or the translate memo no longer holds.
 * @module
 */
import type { Counter, Registry } from "../../../lib/metrics/mod.ts";

/** The encode counters of one agent, on its registry. */
export class EncodeMetrics {
  /** Resources encoded, by `type_url`. */
  readonly encoded: Counter;
  /** Resources whose earlier encoding was used again, by `type_url`. */
  readonly reused: Counter;

  constructor(registry: Registry) {
    this.encoded = registry.counter(
      "aether_xds_resources_encoded_total",
      "xDS resources encoded to protobuf for a snapshot (new or changed ones), by type.",
    );
    this.reused = registry.counter(
      "aether_xds_resources_reused_total",
      "xDS resources served in a snapshot with an earlier snapshot's encoding (unchanged), by type.",
    );
  }

  /** Counts one encoded list of `typeUrl`: `encoded` resources encoded, `reused` reused. */
  count(typeUrl: string, encoded: number, reused: number): void {
    const labels = { type_url: typeUrl };
    this.encoded.inc(labels, encoded);
    this.reused.inc(labels, reused);
  }
}
