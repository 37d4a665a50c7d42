/**
 * The status writer's scheduling, against a scripted API client (the real API server's side is
 * controller/controller_test.ts and `deno task bench controller`): writes run `concurrency` at a
 * time, never two for one object, and a 429 pauses every write until the wait it asks is over.
 */
import assert from "node:assert/strict";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import type { KubeClient, KubeResponse } from "../lib/kube/mod.ts";
import { StatusWriter } from "./status_writer.ts";
import type { StatusUpdate } from "./status_plan.ts";

interface Call {
  path: string;
  body: { status: { n: number } };
  answer(res: KubeResponse): void;
}

/** A client whose PATCHes wait until the test answers them. */
function scriptedClient() {
  const calls: Call[] = [];
  const waiting: Call[] = [];
  const client = {
    request(_method: string, path: string, body: Call["body"]): Promise<KubeResponse> {
      return new Promise((answer) => {
        const call = { path, body, answer };
        calls.push(call);
        waiting.push(call);
      });
    },
  } as unknown as KubeClient;
  const ok = (c: Call) => c.answer({ status: 200, json: { status: c.body.status } });
  return { client, calls, waiting, ok };
}

const update = (name: string, n: number): StatusUpdate => ({
  key: `HTTPRoute/default/${name}`,
  target: {
    kind: "HTTPRoute",
    apiVersion: "gateway.networking.k8s.io/v1",
    namespace: "default",
    name,
    resourceVersion: "1",
  },
  status: { n },
  live: undefined,
});

const tick = () => new Promise((r) => setTimeout(r, 5));

async function until(what: string, f: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (f()) return;
    await tick();
  }
  throw new Error(`never: ${what}`);
}

function writer(client: KubeClient, opts: Partial<ConstructorParameters<typeof StatusWriter>[0]>) {
  return new StatusWriter({
    client,
    logger: new Logger("status", () => {}),
    metrics: new Registry(),
    isLeader: () => true,
    ...opts,
  });
}

Deno.test("status writer: `concurrency` writes in flight, every update written once", async () => {
  const c = scriptedClient();
  const w = writer(c.client, { qps: 1000, burst: 1000, concurrency: 4 });
  w.offer(Array.from({ length: 20 }, (_, i) => update(`r${i}`, i)));
  let most = 0;
  while (c.calls.length < 20 || c.waiting.length > 0) {
    await until("a write in flight", () => c.waiting.length > 0);
    await tick();
    most = Math.max(most, c.waiting.length);
    c.ok(c.waiting.shift()!);
  }
  assert.equal(most, 4);
  assert.equal(new Set(c.calls.map((x) => x.path)).size, 20);
  await w.stop();
});

Deno.test("status writer: one object is never written twice at once; its newest status wins", async () => {
  const c = scriptedClient();
  const w = writer(c.client, { qps: 1000, burst: 1000, concurrency: 4 });
  w.offer([update("a", 1)]);
  await until("the first write", () => c.waiting.length === 1);
  w.offer([update("a", 2), update("b", 1), update("c", 1)]);
  w.offer([update("a", 3)]);
  await until("b and c in flight beside a", () => c.waiting.length === 3);
  await tick();
  const paths = c.waiting.map((x) => x.path);
  assert.equal(new Set(paths).size, paths.length, `one object twice at once: ${paths}`);
  for (const call of c.waiting.splice(0)) c.ok(call);
  await until("a's newer status written", () => c.waiting.length === 1);
  assert.deepEqual(c.waiting[0].body.status, { n: 3 });
  c.ok(c.waiting.shift()!);
  await w.stop();
  assert.equal(c.calls.length, 4);
});

Deno.test("status writer: a 429 pauses every write for the wait it asks, then requeues", async () => {
  const c = scriptedClient();
  let now = 0;
  const metrics = new Registry();
  const w = writer(c.client, { qps: 1000, burst: 1000, concurrency: 2, now: () => now, metrics });
  w.offer([update("a", 1)]);
  await until("the first write", () => c.waiting.length === 1);
  c.waiting.shift()!.answer({
    status: 429,
    json: { kind: "Status", code: 429, details: { retryAfterSeconds: 1 } },
  });
  await tick();
  w.offer([update("b", 1)]);
  for (let i = 0; i < 10; i++) await tick();
  assert.equal(c.calls.length, 1, "a write started while the API server asked us to wait");
  now = 1000; // the wait is over (the writer's timer fires within a second)
  await until("both written after the wait", () => c.waiting.length === 2);
  assert.deepEqual(c.waiting.map((x) => x.path.split("/").at(-2)).sort(), ["a", "b"]);
  for (const call of c.waiting.splice(0)) c.ok(call);
  await w.stop();
  const text = metrics.render();
  assert.match(text, /aether_controller_status_writes_total\{[^}]*result="throttled"[^}]*\} 1/);
});
