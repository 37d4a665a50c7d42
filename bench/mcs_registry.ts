/**
 * The clusterset registry at issue 20's scale on one real etcd (Debian's etcd-server, started by
 * e2e/peers/etcd.ts in a temp dir): `origins` clusters × `services` exported Services × `endpoints`
 * ready endpoints each, values built by lib/mcs (ExportRecord / EndpointRecord JSON), keys from
 * lib/registry/layout.ts, one OriginWriter per origin with a 10 s lease, all over EtcdKv (etcd's
 * JSON gateway) as the controller runs them.
 *
 * Measured: (1) every writer publishing its full map at once → keys/s; (2) a RegistryMirror's first
 * full read, its heap/RSS before and after (gc forced under `--v8-flags=--expose-gc`); (3) one
 * endpoint changed in cluster B, `changes` times → the mirror's onChange showing it (it stops at
 * the importer's mirror: no resolve, translate or EDS step); (4) identical re-puts (the writers' re-publish, then a
 * raw re-put of every key) must not move onChange; (5) the npm client `etcd3` (gRPC), same etcd,
 * after our keys left: the same keys in guarded transactions of ≤ 127 puts, origins concurrently,
 * and a prefix watcher's put → event latency; a peer that cannot load or run reports its error.
 *
 * `deno run -A --v8-flags=--expose-gc bench/mcs_registry.ts [origins] [services] [endpoints]
 * [changes]` (defaults 10 1000 10 200) prints progress on stderr and one JSON line on stdout.
 */
import { Logger } from "../lib/log/mod.ts";
import { Counter, Gauge } from "../lib/metrics/mod.ts";
import {
  EtcdKv,
  MAX_TXN_OPS,
  type Origin,
  originId,
  originPrefix,
  OriginWriter,
  REGISTRY_PREFIX,
  RegistryMirror,
} from "../lib/registry/mod.ts";
import { startEtcd } from "../e2e/peers/etcd.ts";
import { changed, clustersetOrigins, originMap, pct, summary } from "./mcs_fixture.ts";

const ORIGINS = Number(Deno.args[0] ?? 10);
const SERVICES = Number(Deno.args[1] ?? 1000);
const ENDPOINTS = Number(Deno.args[2] ?? 10);
const CHANGES = Number(Deno.args[3] ?? 200);
const TTL_SECONDS = 10;
/** The etcd3 peer writes under its own root: the mirror never sees its keys. */
const PEER_ROOT = "/etcd3bench/v1/";
const gc = (globalThis as { gc?: () => void }).gc;
const began = performance.now();

/** Progress on stderr (stdout carries the one JSON line). */
const phase = (what: string) =>
  console.error(`mcs: ${what} at ${((performance.now() - began) / 1000).toFixed(1)} s`);
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** This process's V8 heap in use and RSS, after a full gc when gc is exposed. */
function memory(): { heapUsedMiB: number; rssMiB: number } {
  for (let i = 0; gc && i < 3; i++) gc();
  const m = Deno.memoryUsage();
  return { heapUsedMiB: mib(m.heapUsed), rssMiB: mib(m.rss) };
}

/** User + system CPU seconds a process has used so far (Linux /proc, 100 ticks a second). */
function cpuS(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Wall time, keys/s and the CPU seconds of this process and of etcd while `write` runs. */
async function timedWrite(
  keys: number,
  etcdPid: number | undefined,
  write: () => Promise<unknown>,
) {
  const [cpu0, etcdCpu0, t0] = [cpuS(Deno.pid), cpuS(etcdPid), performance.now()];
  await write();
  const s = (performance.now() - t0) / 1000;
  return {
    writeS: r2(s),
    keysPerS: Math.round(keys / s),
    clientCpuS: r2(cpuS(Deno.pid) - cpu0),
    etcdCpuS: r2(cpuS(etcdPid) - etcdCpu0),
  };
}

/** One awaited value at a time: `expect` arms it, `saw` (from a callback) resolves it. */
function expectation() {
  let armed: { key: string; value: string; resolve: (at: number) => void } | undefined;
  return {
    expect: (key: string, value: string) =>
      new Promise<number>((resolve) => armed = { key, value, resolve }),
    saw: (key: string, value: string | undefined) => {
      if (armed && armed.key === key && armed.value === value) {
        armed.resolve(performance.now());
        armed = undefined;
      }
    },
    armedKey: () => armed?.key,
  };
}

/** The etcd3 peer on the same etcd; throws what it threw when it cannot load or run. */
async function peer(
  url: string,
  etcdPid: number | undefined,
  origins: Origin[],
  maps: Map<string, string>[],
  epKeysB: string[],
): Promise<Record<string, unknown>> {
  // A peer measured here only, pinned in place: not one of the project's dependencies.
  // deno-lint-ignore no-import-prefix
  const { Etcd3 } = await import("npm:etcd3@1.1.2");
  const client = new Etcd3({ hosts: url });
  const leases: { revoke(): Promise<void> }[] = [];
  try {
    const ids: string[] = [];
    const keys = maps.reduce((n, m) => n + m.size, 0);
    const write = await timedWrite(keys, etcdPid, () =>
      Promise.all(origins.map(async (o, i) => {
        const prefix = originPrefix(o, PEER_ROOT);
        const lease = client.lease(TTL_SECONDS);
        leases.push(lease);
        const id = ids[i] = await lease.grant();
        const since = new Date().toISOString();
        const claim = await client.put(`${prefix}alive`)
          .value(JSON.stringify({ writer: "etcd3", since })).lease(id).exec();
        const guard = () => client.if(`${prefix}alive`, "Mod", "==", String(claim.header.revision));
        const entries = [...maps[i], ["synced", "etcd3"]];
        for (let j = 0; j < entries.length; j += MAX_TXN_OPS) {
          const puts = entries.slice(j, j + MAX_TXN_OPS)
            .map(([k, v]) => client.put(prefix + k).value(v).lease(id));
          const r = await guard().then(...puts).commit();
          if (!r.succeeded) throw new Error(`etcd3: guarded transaction failed (${originId(o)})`);
        }
      })));
    phase("etcd3 written; etcd3 changes");
    const prefixB = originPrefix(origins[1], PEER_ROOT);
    const watcher = await client.watch().prefix(prefixB).create();
    const seen = expectation();
    const decoder = new TextDecoder();
    watcher.on(
      "put",
      (kv: { key: Uint8Array; value: Uint8Array }) =>
        seen.saw(decoder.decode(kv.key), decoder.decode(kv.value)),
    );
    const latencies: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const { key, value } = changed(maps[1], epKeysB, CHANGES + i);
      const shown = seen.expect(prefixB + key, value);
      const t = performance.now();
      await client.put(prefixB + key).value(value).lease(ids[1]).exec();
      latencies.push((await shown) - t);
    }
    await watcher.cancel();
    return { ok: true, ...write, change: summary(latencies) };
  } finally {
    await Promise.all(leases.map((l) => l.revoke().catch(() => {})));
    client.close();
  }
}

async function main(): Promise<Record<string, unknown>> {
  const origins = clustersetOrigins(ORIGINS);
  const maps = origins.map((o, i) => originMap(o, i, { services: SERVICES, endpoints: ENDPOINTS }));
  const keys = maps.reduce((n, m) => n + m.size, 0);
  const valueBytes = maps.flatMap((m) => [...m.values()]).reduce((n, v) => n + v.length, 0);
  const epKeysB = [...maps[1].keys()].filter((k) => k.startsWith("eps/"));
  const dir = await Deno.makeTempDir({ prefix: "aether-bench-mcs-" });
  const etcd = await startEtcd(dir, "bench");
  const etcdPid = etcd.proc()?.child.pid;
  const kv = new EtcdKv({ url: etcd.url }); // the controller's: default 5 s deadline per call
  const logger = new Logger("bench.mcs", undefined, "warn");
  const writers = origins.map((origin) =>
    new OriginWriter({ kv, origin, writer: "registrar", ttlSeconds: TTL_SECONDS, logger })
  );
  const publishAll = () => Promise.all(writers.map((w, i) => w.publish(maps[i])));
  const counter = () => new Counter("bench", "");
  const seen = expectation();
  const calls = { onChange: 0 };
  const idB = originId(origins[1]);
  const mirror: RegistryMirror = new RegistryMirror({
    kv,
    logger,
    metrics: { up: new Gauge("up", ""), relists: counter(), errors: counter(), changes: counter() },
    onChange: (ids) => {
      calls.onChange++;
      const key = seen.armedKey();
      if (key && ids.has(idB)) seen.saw(key, mirror.origin(idB)?.entries.get(key));
    },
  });
  let deadline: ReturnType<typeof setTimeout> | undefined;
  try {
    phase(`etcd up, ${keys} values built (${r1(valueBytes / 2 ** 20)} MiB); writing`);
    const write = await timedWrite(keys, etcdPid, publishAll);

    phase("written; the mirror's first read");
    const before = memory();
    let t0 = performance.now();
    await Promise.race([
      mirror.start(),
      new Promise((_, reject) => {
        deadline = setTimeout(() => reject(new Error("no first read in 120 s")), 120_000);
      }),
    ]);
    clearTimeout(deadline);
    const firstReadS = (performance.now() - t0) / 1000;
    const held = mirror.origins().reduce((n, o) => n + o.entries.size, 0);
    if (held !== keys || mirror.origins().length !== ORIGINS) {
      throw new Error(`the mirror holds ${held} keys of ${mirror.origins().length} origins`);
    }
    const after = memory();

    phase("the mirror holds every key; changing cluster B");
    const current = new Map(maps[1]);
    const latencies: number[] = [];
    const publishMs: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const { key, value } = changed(maps[1], epKeysB, i);
      current.set(key, value);
      const next = new Map(current);
      const shown = seen.expect(key, value);
      t0 = performance.now();
      await writers[1].publish(next);
      publishMs.push(performance.now() - t0);
      latencies.push((await shown) - t0);
    }
    maps[1] = current;

    phase("changes seen; identical re-puts");
    const callsBefore = calls.onChange;
    const probe = `${REGISTRY_PREFIX}\u0000`;
    const rev0 = (await kv.range(probe)).revision;
    await publishAll();
    const writerRevisions = (await kv.range(probe)).revision - rev0;
    // Every key but the claims (a re-put `alive` would move the writers' fencing revision). The
    // range alone is timed: it is the part of a first read under EtcdKv's per-call deadline.
    t0 = performance.now();
    const whole = await kv.range(REGISTRY_PREFIX);
    const rangeS = r2((performance.now() - t0) / 1000);
    const all = whole.kvs.filter((x) => !x.key.endsWith("/alive"));
    t0 = performance.now();
    let last = 0;
    for (let j = 0; j < all.length; j += MAX_TXN_OPS) {
      const ops = all.slice(j, j + MAX_TXN_OPS)
        .map((x) => ({ put: x.key, value: x.value, lease: x.lease }));
      last = (await kv.txn(undefined, ops)).revision;
    }
    while (mirror.revision < last) {
      if (performance.now() - t0 > 120_000) throw new Error("the mirror did not catch up in 120 s");
      await sleep(5);
    }
    const rawS = r2((performance.now() - t0) / 1000);
    await sleep(200);
    const callsAfter = calls.onChange;
    const rePut = { writerRevisions, rawKeys: all.length, rawS, callsBefore, callsAfter };
    if (callsAfter !== callsBefore) {
      throw new Error(`identical re-puts reached onChange: ${JSON.stringify(rePut)}`);
    }

    // Our keys leave (leases revoked) so the peer too writes into an empty key space.
    mirror.stop();
    await Promise.all(writers.map((w) => w.withdraw()));
    await kv.compact((await kv.range(probe)).revision);
    phase("re-puts passed nothing on; etcd3");
    let etcd3: Record<string, unknown>;
    try {
      etcd3 = await peer(etcd.url, etcdPid, origins, maps, epKeysB);
    } catch (e) {
      etcd3 = { ok: false, error: `${(e as Error).name}: ${(e as Error).message}` };
    }
    const ours = { ...write, change: summary(latencies) };
    const theirs = etcd3.change as Record<string, number> | undefined;
    return {
      origins: ORIGINS,
      services: SERVICES,
      endpoints: ENDPOINTS,
      keys,
      valueMiB: r1(valueBytes / 2 ** 20),
      gcForced: gc !== undefined,
      ours,
      publishP50Ms: r1(pct(publishMs, 50)),
      mirror: {
        firstReadS: r2(firstReadS),
        rangeS,
        keysHeld: held,
        before,
        after,
        heapDeltaMiB: after.heapUsedMiB - before.heapUsedMiB,
        rssDeltaMiB: after.rssMiB - before.rssMiB,
      },
      rePut,
      etcd3,
      ratios: etcd3.ok && theirs
        ? {
          writeKeysPerS: r2(ours.keysPerS / (etcd3.keysPerS as number)),
          changeP50: r2(ours.change.p50Ms / theirs.p50Ms),
          changeP99: r2(ours.change.p99Ms / theirs.p99Ms),
        }
        : undefined,
    };
  } finally {
    clearTimeout(deadline);
    mirror.stop();
    await Promise.all(writers.map((w) => w.stop().catch(() => {})));
    await etcd.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

console.log(JSON.stringify(await main()));
phase("done, etcd stopped");
