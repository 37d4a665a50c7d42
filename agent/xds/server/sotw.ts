/**
 * State-of-the-world ADS (`StreamAggregatedResources`): each response carries the full selected
 * set of a type with a content version; ACK/NACK by response_nonce, stale nonces ignored.
 * @module
 */
import { TypeUrl } from "../proto.ts";
import { AdsStream, emptyIsWildcard, type StreamDeps, type TypeState } from "./stream.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "./service.ts";

/** One SotW ADS stream. `send` writes a response to the client. */
export class SotwStream extends AdsStream {
  readonly mode = "sotw" as const;

  constructor(deps: StreamDeps, private readonly send: (res: DiscoveryResponse) => void) {
    super(deps);
  }

  /** Handles one DiscoveryRequest. */
  handle(req: DiscoveryRequest): void {
    const typeUrl = req.type_url ?? "";
    if (!typeUrl) {
      this.deps.logger.warn("request without type_url ignored", { node: this.nodeId });
      return;
    }
    if (!this.attach(req.node)) return;
    const st = this.state(typeUrl);
    const nonce = req.response_nonce ?? "";
    if (nonce) {
      // A stale nonce: the client has not seen our latest response yet; ignore the request.
      if (!this.settle(typeUrl, st, nonce, req.error_detail)) return;
    } else if (st.lastNonce) {
      // A fresh request on a type we already answered: the client starts over.
      st.nonce = st.sentVersion = undefined;
      st.known = new Map();
    }
    const names = (req.resource_names ?? []).filter((n) => n !== "*");
    st.wildcard = emptyIsWildcard(typeUrl)
      ? names.length === 0 || (req.resource_names ?? []).includes("*")
      : (req.resource_names ?? []).includes("*");
    st.names = new Set(names);
    st.memo = undefined;
    if (!nonce && req.version_info && req.version_info === this.currentVersion(typeUrl, st)) {
      // A reconnecting client that already has exactly this content: nothing to send.
      st.sentVersion = st.ackedVersion = req.version_info;
      st.known = new Map(this.selected(typeUrl, st).map((r) => [r.name, r.hash]));
      st.acked = st.known;
    }
    this.pump();
  }

  /**
   * Wildcard types (LDS, CDS) are re-sent whenever their full set changes: removals happen by
   * omission. Named types (RDS, EDS, SDS) are re-sent only when a selected resource is new or
   * changed (or, EDS, after a CDS response with a cluster of theirs: resendEndpointsOf); the
   * client drops the others itself when no listener or cluster refers to them.
   */
  protected push(typeUrl: string, st: TypeState): void {
    if (!this.subscribed(st)) return;
    const selected = this.selected(typeUrl, st);
    const version = this.currentVersion(typeUrl, st);
    if (version === st.sentVersion && !st.resend) return;
    const fresh = selected.filter((r) => st.known.get(r.name) !== r.hash);
    if (!st.wildcard && fresh.length === 0 && st.sentVersion !== undefined) return;
    st.known = new Map(selected.map((r) => [r.name, r.hash]));
    if (typeUrl === TypeUrl.cluster) this.resendEndpointsOf(fresh);
    const nonce = this.nextNonce();
    this.sent(typeUrl, st, version, nonce);
    this.send({
      version_info: version,
      type_url: typeUrl,
      nonce,
      resources: selected.map((r) => ({ type_url: r.typeUrl, value: r.value })),
    });
  }
}
