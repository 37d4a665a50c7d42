/**
 * SPIFFE Workload API client: the agent's own X.509-SVID and trust bundles (the edge Envoy's
 * client certificate), streamed from the SPIRE agent's workload socket (`--spire-socket`),
 * reconnecting with backoff.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import { identityRoot, streamMethod, type X509SvidResponse } from "./proto.ts";
import { type BackoffOptions, ReconnectingStream } from "./stream.ts";
import {
  certsPem,
  parseSpiffeId,
  splitDer,
  type Svid,
  svidFromDer,
  type TrustBundle,
} from "./svid.ts";

/** One Workload API update: the caller's SVIDs (the first is the default) and bundles. */
export interface WorkloadUpdate {
  svids: Svid[];
  /** The SVIDs' own trust domain first, then federated ones. */
  bundles: TrustBundle[];
}

/** Converts a FetchX509SVID response (pure). */
export function workloadUpdate(res: X509SvidResponse): WorkloadUpdate {
  const svids = res.svids.map((s) =>
    svidFromDer(s.spiffe_id, splitDer(s.x509_svid), s.x509_svid_key)
  );
  const bundles = new Map<string, TrustBundle>();
  for (const s of res.svids) {
    const td = parseSpiffeId(s.spiffe_id).trustDomain;
    if (!bundles.has(td)) bundles.set(td, { trustDomain: td, caPem: certsPem(splitDer(s.bundle)) });
  }
  for (const [id, der] of Object.entries(res.federated_bundles ?? {})) {
    const td = id.startsWith("spiffe://") ? parseSpiffeId(id).trustDomain : id;
    if (!bundles.has(td)) bundles.set(td, { trustDomain: td, caPem: certsPem(splitDer(der)) });
  }
  return { svids, bundles: [...bundles.values()] };
}

/** Options of {@link WorkloadApiClient}. */
export interface WorkloadApiOptions extends BackoffOptions {
  /** The SPIRE agent's workload socket path. */
  socket: string;
  logger: Logger;
  onUpdate(update: WorkloadUpdate): void;
  onState?(connected: boolean, error?: string): void;
}

/** Watches the caller's own SVIDs on the Workload API until closed. */
export class WorkloadApiClient {
  readonly #stream;

  constructor(o: WorkloadApiOptions) {
    const method = streamMethod<Record<string, never>, X509SvidResponse>(
      identityRoot("workload"),
      "SpiffeWorkloadAPI",
      "FetchX509SVID",
    );
    this.#stream = new ReconnectingStream({
      ...o,
      method,
      request: {},
      metadata: { "workload.spiffe.io": "true" },
      onMessage: (m) => o.onUpdate(workloadUpdate(m)),
      what: `workload API ${o.socket}`,
      hint: "check that the SPIRE agent's socket_path is this socket (--spire-socket) and that a " +
        "registration entry matches this agent (e.g. its unix uid or k8s service account)",
    });
  }

  /** True while the stream is up. */
  get connected(): boolean {
    return this.#stream.connected;
  }

  close(): void {
    this.#stream.close();
  }
}
