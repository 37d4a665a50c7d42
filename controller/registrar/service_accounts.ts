/**
 * The cluster's ServiceAccounts, watched on the API server (`/api/v1/serviceaccounts`, every
 * namespace) with lib/kube's Reflector: undefined until the first full list, then kept current;
 * API server outages keep the last list (the Reflector never empties its store on a failure).
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Registry } from "../../lib/metrics/mod.ts";
import { type KubeClient, Reflector } from "../../lib/kube/mod.ts";
import type { ServiceAccountRef } from "./entries.ts";

/** Options of {@link ServiceAccountWatch}. */
export interface ServiceAccountWatchOptions {
  client: KubeClient;
  logger: Logger;
  metrics: Registry;
  /** Runs after the list changed (and after the first full list). */
  onChange(): void;
}

/** A ServiceAccount's namespace and name from its JSON. */
function refOf(raw: unknown): ServiceAccountRef {
  const md = (raw as { metadata?: { namespace?: string; name?: string } }).metadata ?? {};
  return { namespace: md.namespace ?? "", name: md.name ?? "" };
}

/** Every ServiceAccount of the cluster, by namespace and name. */
export class ServiceAccountWatch {
  readonly #reflector: Reflector<ServiceAccountRef>;

  constructor(o: ServiceAccountWatchOptions) {
    const m = o.metrics;
    this.#reflector = new Reflector<ServiceAccountRef>({
      client: o.client,
      path: "/api/v1/serviceaccounts",
      kind: "ServiceAccount",
      transform: refOf,
      onChange: () => o.onChange(),
      logger: o.logger,
      // The same series as the controller's other watches.
      metrics: {
        events: m.counter(
          "aether_kube_watch_events_total",
          "Watch events received, by kind and type.",
        ),
        lists: m.counter(
          "aether_kube_lists_total",
          "Full lists (start, relist after 410), by kind.",
        ),
        errors: m.counter(
          "aether_kube_watch_errors_total",
          "Failed lists/watches (each retried with backoff), by kind.",
        ),
      },
    });
  }

  /** Starts watching; resolves after the first full list (retrying until there is one). */
  async start(): Promise<void> {
    await this.#reflector.start();
  }

  /** The ServiceAccounts, or undefined before the first full list. */
  list(): ServiceAccountRef[] | undefined {
    return this.#reflector.synced ? this.#reflector.values() : undefined;
  }

  /** Whether the API server answers (no list/watch failure streak going on). */
  get healthy(): boolean {
    return this.#reflector.failingSince === undefined;
  }

  /** Ends the watch. */
  async stop(): Promise<void> {
    await this.#reflector.stop();
  }
}
