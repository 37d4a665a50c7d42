/**
 * SPIRE Delegated Identity API client (the SPIRE agent's admin socket, `--spire-admin-socket`):
 * X.509-SVIDs of other workloads by their selectors, and every X.509 bundle the agent holds. The
 * aether agent must be listed in the SPIRE agent's `authorized_delegates`. Streams reconnect with
 * backoff (stream.ts); each subscription dials its own connection and lives until closed.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import {
  type DelegatedBundlesResponse,
  type DelegatedSvidsResponse,
  identityRoot,
  type Selector,
  type StreamMethod,
  streamMethod,
} from "./proto.ts";
import { type BackoffOptions, ReconnectingStream } from "./stream.ts";
import { certsPem, splitDer, type Svid, svidFromDer, type TrustBundle } from "./svid.ts";

const SERVICE = "spire.api.agent.delegatedidentity.v1.DelegatedIdentity";
const HINT = "check that the SPIRE agent runs with admin_socket_path at this socket " +
  "(--spire-admin-socket) and lists this agent's SPIFFE ID in authorized_delegates";

/** Converts a SubscribeToX509SVIDs message (pure); SVIDs without an id or chain are dropped. */
export function delegatedSvids(res: DelegatedSvidsResponse): Svid[] {
  const out: Svid[] = [];
  for (const s of res.x509_svids) {
    const x = s.x509_svid;
    if (!x?.id || x.cert_chain.length === 0) continue;
    out.push(
      svidFromDer(`spiffe://${x.id.trust_domain}${x.id.path}`, x.cert_chain, s.x509_svid_key),
    );
  }
  return out;
}

/** Converts a SubscribeToX509Bundles message (pure), sorted by trust domain. */
export function delegatedBundles(res: DelegatedBundlesResponse): TrustBundle[] {
  return Object.entries(res.ca_certificates ?? {}).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    .map(([td, der]) => ({
      trustDomain: td.startsWith("spiffe://") ? td.slice("spiffe://".length) : td,
      caPem: certsPem(splitDer(der)),
    }));
}

/** Callbacks and backoff of one subscription. */
export interface SubscriptionOptions<T> extends BackoffOptions {
  onUpdate(value: T): void;
  onState?(connected: boolean, error?: string): void;
}

/** A handle to close one subscription. */
export interface Subscription {
  readonly connected: boolean;
  close(): void;
}

/** The admin socket's subscriptions; each has a connection of its own (see stream.ts). */
export class DelegatedIdentityClient {
  readonly #svids: StreamMethod<{ selectors: Selector[] }, DelegatedSvidsResponse>;
  readonly #bundles: StreamMethod<Record<string, never>, DelegatedBundlesResponse>;

  constructor(readonly socket: string, readonly logger: Logger) {
    const root = identityRoot("delegated");
    this.#svids = streamMethod(root, SERVICE, "SubscribeToX509SVIDs");
    this.#bundles = streamMethod(root, SERVICE, "SubscribeToX509Bundles");
  }

  /** Subscribes to the SVIDs of the workloads these selectors describe. */
  subscribeSvids(selectors: Selector[], o: SubscriptionOptions<Svid[]>): Subscription {
    return new ReconnectingStream({
      ...o,
      socket: this.socket,
      method: this.#svids,
      request: { selectors },
      onMessage: (m) => o.onUpdate(delegatedSvids(m)),
      logger: this.logger,
      hint: HINT,
      what: `delegated SVIDs ${selectors.map((s) => `${s.type}:${s.value}`).join(",")}`,
    });
  }

  /** Subscribes to every X.509 bundle the SPIRE agent holds. */
  subscribeBundles(o: SubscriptionOptions<TrustBundle[]>): Subscription {
    return new ReconnectingStream({
      ...o,
      socket: this.socket,
      method: this.#bundles,
      request: {},
      onMessage: (m) => o.onUpdate(delegatedBundles(m)),
      logger: this.logger,
      hint: HINT,
      what: "delegated bundles",
    });
  }

  /** Nothing to release: each subscription closes its own connection. */
  close(): void {}
}
