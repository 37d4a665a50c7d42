/**
 * The SPIRE registrar (controller/registrar/) against a real spire-server v1.13.3 (e2e/spire.ts):
 * 1,000 ServiceAccounts become 1,001 entries (the cluster alias + one each), counted over the
 * Entry API and with the spire-server CLI; a new registrar instance changes nothing; a TTL change
 * updates entries in place; a removed ServiceAccount's entry goes; an entry made with the CLI
 * (not aether's) survives everything; a spire-server restart is retried until it answers. Also
 * pins what the server accepts: the `hint` field and ListEntries' by_hint filter, and the refusal
 * of SPIFFE IDs under the reserved `/spire/` path (why the alias is `/aether/cluster/<name>`).
 */
import assert from "node:assert/strict";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import {
  type ActualEntry,
  clusterAliasId,
  OWNER_HINT,
  type PassResult,
  Registrar,
  serviceAccountId,
  type ServiceAccountRef,
  SpireApiError,
  SpireEntryClient,
} from "../controller/registrar/mod.ts";
import { startSpire } from "./spire.ts";
import { dumpOutput, exec, waitFor } from "./peers/proc.ts";

const TD = "aether.test", CLUSTER = "e2e";

function serviceAccounts(n: number): ServiceAccountRef[] {
  const out: ServiceAccountRef[] = [];
  for (let i = 0; i < n; i++) out.push({ namespace: `ns-${i % 50}`, name: `sa-${i}` });
  return out;
}

/** A registrar on the real socket, its source a plain array the test edits. */
function registrar(socket: string, source: { sas: ServiceAccountRef[] }, ttl = 3600) {
  const passes: PassResult[] = [];
  const logs: string[] = [];
  const r = new Registrar({
    connect: () => new SpireEntryClient(socket),
    serviceAccounts: () => source.sas,
    trustDomain: TD,
    clusterName: CLUSTER,
    svidTtlSeconds: ttl,
    logger: new Logger("registrar", (l) => logs.push(l), "info"),
    metrics: new Registry(),
    debounceMs: 50,
    resyncMs: 600_000,
    backoff: { initialMs: 200, maxMs: 1000 },
    onPass: (p) => passes.push(p),
  });
  /** Resolves with the next successful pass after `from` passes. */
  const passAfter = (from: number, timeoutMs = 120_000) =>
    waitFor(
      "a successful registrar pass",
      () => {
        const ok = passes.slice(from).find((p) => p.ok);
        return Promise.resolve(ok);
      },
      timeoutMs,
    ) as Promise<Extract<PassResult, { ok: true }>>;
  return { r, passes, logs, passAfter };
}

const byId = (es: ActualEntry[]) => new Map(es.map((e) => [e.id, e]));

Deno.test("SPIRE registrar: 1,000 ServiceAccounts → 1,001 entries on a real spire-server", async () => {
  const spire = await startSpire({ trustDomain: TD });
  const client = new SpireEntryClient(spire.serverSocket);
  const cli = (...args: string[]) =>
    exec(spire.serverBin, [
      ...args.slice(0, 2),
      "-socketPath",
      spire.serverSocket,
      ...args.slice(2),
    ]);
  const running: { stop(): Promise<void> }[] = [];
  try {
    // Not aether's: made with the CLI, it must survive every pass.
    const foreignId = `spiffe://${TD}/ns/ns-1/sa/sa-1`;
    await spire.register(foreignId, ["k8s:ns:ns-1", "k8s:sa:sa-1"]);
    // startSpire's entries (the join token's node entry, the aether agent's) + the foreign one.
    const before = await client.listEntries();
    assert.ok(before.length >= 2 && before.every((e) => e.hint === ""), JSON.stringify(before));

    // SPIRE refuses entry SPIFFE IDs under /spire/ (reserved), hence the alias's path.
    await assert.rejects(
      () =>
        client.createEntries([{
          spiffeId: `spiffe://${TD}/spire/aether/cluster/${CLUSTER}`,
          parentId: `spiffe://${TD}/spire/server`,
          selectors: [`k8s_psat:cluster:${CLUSTER}`],
          x509SvidTtl: 0,
          admin: false,
          downstream: false,
          hint: OWNER_HINT,
        }]),
      (e) => e instanceof SpireApiError && /reserved/.test(e.message),
    );

    // 1,000 ServiceAccounts.
    const source = { sas: serviceAccounts(1000) };
    const first = registrar(spire.serverSocket, source);
    running.push(first.r);
    const t0 = performance.now();
    first.r.start();
    const p1 = await first.passAfter(0);
    const ms = Math.round(performance.now() - t0);
    console.log(
      `registered 1,001 entries (1,000 ServiceAccounts + alias) in ${ms} ms ` +
        `(pass ${p1.ms} ms: created ${p1.created}, existed ${p1.existed}, ` +
        `shadowed ${p1.shadowed})`,
    );
    // ns-1/sa-1 is also the foreign entry's identity, under another parent: not shadowed.
    assert.deepEqual(
      { created: p1.created, updated: p1.updated, deleted: p1.deleted, shadowed: p1.shadowed },
      { created: 1001, updated: 0, deleted: 0, shadowed: 0 },
    );
    const ours = await client.listEntries({ hint: OWNER_HINT });
    assert.equal(ours.length, 1001, "ListEntries by_hint");
    assert.equal(await client.countEntries({ hint: OWNER_HINT }), 1001, "CountEntries by_hint");
    const all = await client.listEntries();
    assert.equal(all.length, before.length + 1001);
    assert.ok(all.some((e) => e.spiffeId === foreignId && e.hint === ""));
    const alias = ours.find((e) => e.spiffeId === clusterAliasId(TD, CLUSTER))!;
    assert.deepEqual([alias.parentId, alias.selectors], [`spiffe://${TD}/spire/server`, [
      `k8s_psat:cluster:${CLUSTER}`,
    ]]);
    // The CLI agrees.
    const count = await cli("entry", "count");
    assert.match(
      count.stdout,
      new RegExp(`${before.length + 1001} registration entries`),
      count.stdout + count.stderr,
    );
    const show = await cli("entry", "show", "-spiffeID", serviceAccountId(TD, "ns-7", "sa-7"));
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /Found 1 entry/);
    assert.match(show.stdout, new RegExp(`Parent ID\\s*:\\s*${clusterAliasId(TD, CLUSTER)}`));
    assert.match(show.stdout, /Selector\s*:\s*k8s:ns:ns-7/);
    assert.match(show.stdout, /Selector\s*:\s*k8s:sa:sa-7/);
    assert.match(show.stdout, /X509-SVID TTL\s*:\s*3600/);
    assert.match(show.stdout, /Hint\s*:\s*aether/);
    await first.r.stop();
    running.pop();

    // A restart (a new instance): nothing created, nothing deleted, the same entries.
    const second = registrar(spire.serverSocket, source);
    running.push(second.r);
    second.r.start();
    const p2 = await second.passAfter(0);
    assert.deepEqual(
      { created: p2.created, existed: p2.existed, updated: p2.updated, deleted: p2.deleted },
      { created: 0, existed: 0, updated: 0, deleted: 0 },
    );
    const again = await client.listEntries({ hint: OWNER_HINT });
    assert.deepEqual([...byId(again).keys()].sort(), [...byId(ours).keys()].sort());

    // A removed ServiceAccount: its entry goes; the foreign entry stays.
    const gone = source.sas.find((s) => s.namespace === "ns-1" && s.name === "sa-1")!;
    source.sas = source.sas.filter((s) => s !== gone);
    const n = second.passes.length;
    second.r.notify();
    const p3 = await second.passAfter(n);
    assert.deepEqual({ created: p3.created, deleted: p3.deleted }, { created: 0, deleted: 1 });
    const after = await client.listEntries();
    assert.equal(after.filter((e) => e.hint === OWNER_HINT).length, 1000);
    assert.ok(!after.some((e) => e.hint === OWNER_HINT && e.spiffeId === foreignId));
    assert.ok(after.some((e) => e.spiffeId === foreignId && e.hint === ""), "foreign entry kept");
    await second.r.stop();
    running.pop();

    // Another TTL: every entry updated in place (same ids).
    const third = registrar(spire.serverSocket, source, 600);
    running.push(third.r);
    third.r.start();
    const p4 = await third.passAfter(0);
    assert.deepEqual(
      { created: p4.created, updated: p4.updated, deleted: p4.deleted },
      { created: 0, updated: 1000, deleted: 0 },
    );
    const ttl = await client.listEntries({ hint: OWNER_HINT });
    assert.ok(ttl.every((e) => e.x509SvidTtl === 600));
    const afterIds = byId(after.filter((e) => e.hint === OWNER_HINT));
    assert.deepEqual([...byId(ttl).keys()].sort(), [...afterIds.keys()].sort());

    // spire-server restarts: passes fail (warned), the process goes on, and a change made
    // meanwhile lands once the server is back.
    await spire.stopServer();
    source.sas = [...source.sas, { namespace: "late", name: "comer" }];
    const m = third.passes.length;
    third.r.notify();
    await waitFor(
      "a failed pass while spire-server is down",
      () => Promise.resolve(third.passes.slice(m).find((p) => !p.ok)),
      30_000,
    );
    assert.ok(third.logs.some((l) => l.includes("SPIRE registration pass failed")));
    const downAt = third.passes.length;
    await spire.startServer();
    const p5 = await third.passAfter(downAt, 60_000);
    assert.equal(p5.created, 1);
    assert.equal(await client.countEntries({ hint: OWNER_HINT }), 1001);
    const ents = await client.listEntries();
    assert.ok(ents.some((e) => e.spiffeId === serviceAccountId(TD, "late", "comer")));
    assert.ok(ents.some((e) => e.spiffeId === foreignId && e.hint === ""));
  } catch (e) {
    console.error(dumpOutput(spire.procs));
    throw e;
  } finally {
    for (const r of running) await r.stop();
    client.close();
    await spire.stop();
  }
});
