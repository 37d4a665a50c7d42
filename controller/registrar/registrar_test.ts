import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import type { CreateOutcome, DeleteOutcome, EntryStore } from "./client.ts";
import { type ActualEntry, type EntrySpec, type ServiceAccountRef } from "./entries.ts";
import { type PassResult, Registrar, type Timers } from "./registrar.ts";

/** A manual clock: timers fire only when the test advances it. */
class FakeClock implements Timers {
  #now = 0;
  #next = 1;
  #timers = new Map<number, { at: number; fn: () => void }>();
  now = () => this.#now;
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + ms, fn });
    return id;
  };
  clearTimeout = (id: unknown) => void this.#timers.delete(id as number);
  /** The delay to the next timer, or undefined. */
  nextIn(): number | undefined {
    const ats = [...this.#timers.values()].map((t) => t.at);
    return ats.length ? Math.min(...ats) - this.#now : undefined;
  }
  /** Moves time on by `ms`, firing due timers in order (and letting their promises settle). */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter(([, t]) =>
        t.at <= end
      ).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].at;
      due[1].fn();
      for (let i = 0; i < 20; i++) await Promise.resolve();
    }
    this.#now = end;
    for (let i = 0; i < 20; i++) await Promise.resolve();
  }
}

/** An in-memory SPIRE server that can be "down". */
class FakeServer {
  entries: ActualEntry[] = [];
  down = false;
  connects = 0;
  #id = 0;
  store(): EntryStore {
    this.connects++;
    const check = () => {
      if (this.down) throw new Error("UNAVAILABLE: connect ENOENT");
    };
    return {
      listEntries: () => {
        check();
        return Promise.resolve(this.entries.map((e) => ({ ...e })));
      },
      createEntries: (specs: readonly EntrySpec[]): Promise<CreateOutcome> => {
        check();
        for (const s of specs) this.entries.push({ ...s, id: `id${++this.#id}` });
        return Promise.resolve({ created: specs.length, existed: 0 });
      },
      updateEntries: (es: readonly ActualEntry[]) => {
        check();
        for (const e of es) this.entries = this.entries.map((x) => x.id === e.id ? { ...e } : x);
        return Promise.resolve(es.length);
      },
      deleteEntries: (ids: readonly string[]): Promise<DeleteOutcome> => {
        check();
        this.entries = this.entries.filter((e) => !ids.includes(e.id));
        return Promise.resolve({ deleted: ids.length, missing: 0 });
      },
      close: () => {},
    };
  }
}

function setup(sas: ServiceAccountRef[] | undefined) {
  const clock = new FakeClock();
  const server = new FakeServer();
  const passes: PassResult[] = [];
  const logs: string[] = [];
  const metrics = new Registry();
  const source = { sas };
  const registrar = new Registrar({
    connect: () => server.store(),
    serviceAccounts: () => source.sas,
    trustDomain: "cluster.local",
    clusterName: "aether",
    svidTtlSeconds: 3600,
    excludeNamespaces: ["kube-system"],
    logger: new Logger("test", (l) => logs.push(l), "debug"),
    metrics,
    timers: clock,
    onPass: (r) => passes.push(r),
  });
  return { clock, server, passes, logs, metrics, source, registrar };
}

const sa = (namespace: string, name: string) => ({ namespace, name });

Deno.test("registrar: no pass before the ServiceAccounts are listed, then one after the debounce", async () => {
  const t = setup(undefined);
  t.registrar.start();
  await t.clock.advance(1000);
  assert.equal(t.server.connects, 0);
  assert.equal(t.registrar.readiness().ready, false);
  t.source.sas = [sa("shop", "web"), sa("kube-system", "coredns")];
  t.registrar.notify();
  await t.clock.advance(199);
  assert.equal(t.passes.length, 0);
  await t.clock.advance(1);
  assert.deepEqual(t.server.entries.map((e) => e.spiffeId).sort(), [
    "spiffe://cluster.local/aether/cluster/aether",
    "spiffe://cluster.local/ns/shop/sa/web",
  ]);
  assert.equal(t.registrar.readiness().ready, true);
  assert.equal(t.metrics.gauge("aether_spire_registrar_desired_entries", "").get(), 2);
  // Resync after 60 s (nothing to change).
  assert.equal(t.clock.nextIn(), 60_000);
  await t.clock.advance(60_000);
  assert.equal(t.passes.length, 2);
  assert.deepEqual(t.passes[1], { ...t.passes[1], created: 0, updated: 0, deleted: 0 });
});

Deno.test("registrar: a burst of changes is one pass; a change removes an entry", async () => {
  const t = setup([sa("a", "x")]);
  t.registrar.start();
  await t.clock.advance(200);
  assert.equal(t.passes.length, 1);
  for (let i = 0; i < 10; i++) {
    t.source.sas = [sa("a", "x"), sa("a", `y${i}`)];
    t.registrar.notify();
    await t.clock.advance(10);
  }
  t.source.sas = [sa("a", "y9")];
  t.registrar.notify();
  await t.clock.advance(200);
  assert.equal(t.passes.length, 2);
  assert.deepEqual(t.server.entries.map((e) => e.spiffeId).sort(), [
    "spiffe://cluster.local/aether/cluster/aether",
    "spiffe://cluster.local/ns/a/sa/y9",
  ]);
});

Deno.test("registrar: a server that is down is retried with growing backoff, then reconciled", async () => {
  const t = setup([sa("a", "x")]);
  t.server.down = true;
  t.registrar.start();
  await t.clock.advance(200);
  const delays: number[] = [];
  for (let i = 0; i < 8; i++) {
    delays.push(t.clock.nextIn()!);
    await t.clock.advance(t.clock.nextIn()!);
  }
  assert.equal(t.passes.filter((p) => !p.ok).length, 9);
  // 500 ms doubling to the 30 s cap, ±20 %.
  for (const [i, want] of [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000].entries()) {
    assert.ok(delays[i] >= want * 0.8 && delays[i] <= want * 1.2, `retry ${i}: ${delays[i]}`);
  }
  // A change while the server is away does not retry sooner than the backoff.
  const wait = t.clock.nextIn()!;
  t.registrar.notify();
  assert.equal(t.clock.nextIn(), wait);
  assert.ok(t.logs.some((l) => l.includes("SPIRE registration pass failed")));
  assert.equal(t.metrics.gauge("aether_spire_registrar_server_up", "").get(), 0);
  t.server.down = false;
  await t.clock.advance(wait);
  assert.equal(t.passes.at(-1)!.ok, true);
  assert.equal(t.server.entries.length, 2);
  assert.equal(t.metrics.gauge("aether_spire_registrar_server_up", "").get(), 1);
  // The backoff starts over.
  t.server.down = true;
  await t.clock.advance(t.clock.nextIn()!);
  const first = t.clock.nextIn()!;
  assert.ok(first >= 400 && first <= 600, `${first}`);
  // Ready stays true (the entries are in place); the detail says what failed.
  const r = t.registrar.readiness();
  assert.equal(r.ready, true);
  assert.match(r.detail, /last pass failed/);
});

Deno.test("registrar: a change during a pass runs another pass right after it", async () => {
  const t = setup([sa("a", "x")]);
  const inner = t.server.store.bind(t.server);
  let release: (() => void) | undefined;
  t.server.store = () => {
    const s = inner();
    return {
      ...s,
      listEntries: async () => {
        await new Promise<void>((r) => release = r);
        return s.listEntries();
      },
    };
  };
  t.registrar.start();
  await t.clock.advance(200);
  assert.ok(release, "a pass is running");
  t.source.sas = [sa("a", "x"), sa("b", "z")];
  t.registrar.notify();
  release!();
  release = undefined;
  await t.clock.advance(0);
  assert.equal(t.passes.length, 1);
  assert.equal(t.clock.nextIn(), 200);
  await t.clock.advance(200);
  release!();
  await t.clock.advance(0);
  assert.equal(t.passes.length, 2);
  assert.equal(t.server.entries.length, 3);
  await t.registrar.stop();
  assert.equal(t.clock.nextIn(), undefined);
});
