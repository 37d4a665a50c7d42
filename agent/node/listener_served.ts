/**
 * Waiting until the node proxy serves a listener: the node's current snapshot holds it and its
 * Envoy has ACKed that whole snapshot (a listener Envoy ACKed is bound; the route tables it
 * names were ACKed with it). A pod's CNI ADD waits on this for the pod's capture listener after
 * its nftables table is in place, so the pod's first connection to a mesh VIP finds the listener
 * the table redirects it to, never a closed port.
 * @module
 */
import type { Snapshot } from "../xds/cache/mod.ts";
import { TypeUrl } from "../xds/proto.ts";

/** What the wait reads: the node's current snapshot and its Envoy's ACKs (the agent's; a fake). */
export interface ServedView {
  /** The node's current snapshot, if any. */
  snapshot(): Snapshot | undefined;
  /** Whether the node's Envoy has ACKed every type of its current snapshot. */
  ready(): boolean;
  /** Calls `listener` each time the node ACKs a new current snapshot; returns the unsubscribe. */
  onReady(listener: () => void): () => void;
}

/** Whether `view` serves listener `name` now. */
export function listenerServed(view: ServedView, name: string): boolean {
  const snap = view.snapshot();
  return !!snap && snap.resources(TypeUrl.listener).items.has(name) && view.ready();
}

/**
 * Resolves once `view` serves listener `name` (at once when it does). Rejects when `signal`
 * aborts, saying whether the listener is not in the snapshot yet or not ACKed yet.
 */
export function whenListenerServed(
  view: ServedView,
  name: string,
  signal?: AbortSignal,
): Promise<void> {
  if (listenerServed(view, name)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const done = () => {
      unsubscribe();
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      done();
      const inSnapshot = view.snapshot()?.resources(TypeUrl.listener).items.has(name) ?? false;
      reject(
        new Error(
          `listener ${name} is not served yet: ${
            inSnapshot
              ? "the node proxy has not ACKed it (is the node proxy running and connected?)"
              : "it is not in the node's configuration yet"
          }`,
        ),
      );
    };
    const unsubscribe = view.onReady(() => {
      if (!listenerServed(view, name)) return;
      done();
      resolve();
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}
