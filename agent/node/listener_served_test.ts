import assert from "node:assert/strict";
import { Snapshot } from "../xds/cache/mod.ts";
import { listenerServed, type ServedView, whenListenerServed } from "./listener_served.ts";

const listener = (name: string) => ({
  name,
  resource: {
    name,
    address: { socket_address: { address: "127.0.0.1", port_value: 15001 } },
  },
});

/** A node whose snapshot and ACK state the test sets; `ack()` plays the Envoy's ACK. */
function fakeNode() {
  let snapshot: Snapshot | undefined;
  let acked = false;
  const listeners = new Set<() => void>();
  const view: ServedView = {
    snapshot: () => snapshot,
    ready: () => acked,
    onReady: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  return {
    view,
    listeners,
    push(names: string[]) {
      snapshot = Snapshot.fromResources({ listeners: names.map(listener) });
      acked = false;
    },
    ack() {
      acked = true;
      for (const l of [...listeners]) l();
    },
  };
}

Deno.test("listenerServed: in the current snapshot and ACKed, not one without the other", () => {
  const n = fakeNode();
  assert.equal(listenerServed(n.view, "capture|a/p"), false, "no snapshot");
  n.push(["capture|a/p"]);
  assert.equal(listenerServed(n.view, "capture|a/p"), false, "not ACKed yet");
  n.ack();
  assert.equal(listenerServed(n.view, "capture|a/p"), true);
  assert.equal(listenerServed(n.view, "capture|a/q"), false, "another pod's");
});

Deno.test("whenListenerServed: waits for the snapshot holding it to be ACKed", async () => {
  const n = fakeNode();
  n.push(["capture|a/other"]);
  n.ack();
  let served = false;
  const wait = whenListenerServed(n.view, "capture|a/p").then(() => served = true);
  n.push(["capture|a/other"]);
  n.ack(); // an ACK of a snapshot without it
  await Promise.resolve();
  assert.equal(served, false);
  n.push(["capture|a/other", "capture|a/p"]);
  await Promise.resolve();
  assert.equal(served, false, "in the snapshot, not ACKed");
  n.ack();
  await wait;
  assert.equal(served, true);
  assert.equal(n.listeners.size, 0, "unsubscribed");
});

Deno.test("whenListenerServed: at once when served; an abort says what is missing", async () => {
  const n = fakeNode();
  n.push(["capture|a/p"]);
  n.ack();
  await whenListenerServed(n.view, "capture|a/p");

  const none = new AbortController();
  const missing = whenListenerServed(n.view, "capture|a/q", none.signal);
  none.abort();
  await assert.rejects(missing, /capture\|a\/q is not served yet: it is not in the node's config/);

  n.push(["capture|a/p", "capture|a/q"]);
  const unacked = whenListenerServed(n.view, "capture|a/q", AbortSignal.abort());
  await assert.rejects(unacked, /the node proxy has not ACKed it/);
  assert.equal(n.listeners.size, 0, "every waiter unsubscribed");
});
