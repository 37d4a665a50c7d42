import assert from "node:assert/strict";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { OriginWriter } from "../lib/registry/mod.ts";
import type { SourceObject, SourceRevision } from "../lib/source/mod.ts";
import { MemoryKv } from "../testbed/memory_kv.ts";
import { RegistrySource } from "./registry_source.ts";

const quiet = new Logger("test", () => {}, "error");

/** Cluster `cluster`'s records: `services` services of `pods` endpoints, `<s>.<pod>` IPs. */
function records(
  cluster: string,
  services: number,
  pods: number,
  moved = new Map<string, string>(),
) {
  const out = new Map<string, string>();
  for (let s = 0; s < services; s++) {
    for (let p = 0; p < pods; p++) {
      const key = `eps/team/svc-${s}/pod-${p}`;
      out.set(
        key,
        JSON.stringify({
          cluster,
          namespace: "team",
          service: `svc-${s}`,
          pod: `pod-${p}`,
          ip: moved.get(key) ?? `10.${cluster === "a.eu" ? 1 : 2}.${s}.${p}`,
          ports: [{ name: "http", protocol: "TCP", port: 8080 }],
        }),
      );
    }
  }
  return out;
}

/** Polls `ok` against the latest revision, up to a generous deadline. */
async function until(
  latest: () => SourceRevision | undefined,
  ok: (r: SourceRevision) => boolean,
): Promise<SourceRevision> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const r = latest();
    if (r && ok(r)) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error("no such revision");
}

const addresses = (o: SourceObject | undefined): string[] =>
  (o?.spec.endpoints ?? []).map((e: { address: string }) => e.address);

Deno.test("registry source: one changed endpoint record parses its service's records, not every origin's", async () => {
  const kv = new MemoryKv();
  const writer = (cluster: string) =>
    new OriginWriter({ kv, origin: { region: "eu", cluster }, writer: cluster, logger: quiet });
  const a = writer("a"), b = writer("b");
  await a.publish(records("a.eu", 40, 3));
  await b.publish(records("b.eu", 40, 3));
  const source = new RegistrySource({
    kv,
    origin: { region: "eu", cluster: "a" },
    logger: quiet,
    metrics: new Registry(),
  });
  let latest: SourceRevision | undefined;
  await source.start((r) => latest = r);
  try {
    const first = await until(() => latest, (r) => r.objects.length === 40);
    const parsed = source.parsedRecords;
    const moved = new Map([["eps/team/svc-7/pod-1", "10.9.9.9"]]);
    await b.publish(records("b.eu", 40, 3, moved));
    const named = (r: SourceRevision, n: string) => r.objects.find((o) => o.metadata.name === n);
    const second = await until(
      () => latest,
      (r) => addresses(named(r, "svc-7")).includes("10.9.9.9"),
    );
    // The changed record once, then svc-7's six records (three per cluster) for its new list.
    assert.equal(source.parsedRecords - parsed, 1 + 6);
    assert.ok(!addresses(named(second, "svc-7")).includes("10.2.7.1"));
    for (const o of second.objects) {
      if (o.metadata.name === "svc-7") continue;
      assert.equal(o, named(first, o.metadata.name), `${o.metadata.name}: the very same object`);
    }
  } finally {
    await source.stop();
    await a.stop();
    await b.stop();
  }
});
