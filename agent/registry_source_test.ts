import assert from "node:assert/strict";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { OriginWriter } from "../lib/registry/mod.ts";
import type { SourceRevision } from "../lib/source/mod.ts";
import { MemoryKv } from "../testbed/memory_kv.ts";
import { RegistrySource } from "./registry_source.ts";

const quiet = new Logger("test", () => {}, "error");

const record = (name: string, weights: [number, number]) =>
  JSON.stringify({
    version: 1,
    cluster: "b.eu",
    kind: "HTTPRoute",
    namespace: "shop",
    name,
    created: "2026-01-01T00:00:00Z",
    parents: [{ name: "web", port: 8080 }],
    rules: [{
      backendRefs: [
        { name: "web-v1", port: 8080, weight: weights[0] },
        { name: "web-v2", port: 8080, weight: weights[1] },
      ],
    }],
  });

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
  throw new Error(`no such revision; the last: ${JSON.stringify(latest()?.objects)}`);
}

Deno.test("registry source: producer route records → HTTPRoutes; malformed ones counted", async () => {
  const kv = new MemoryKv();
  const b = new OriginWriter({
    kv,
    origin: { region: "eu", cluster: "b" },
    writer: "b",
    logger: quiet,
  });
  await b.publish(
    new Map([
      ["routes/HTTPRoute/shop/split", record("split", [90, 10])],
      ["routes/HTTPRoute/shop/bad", "{not json"],
      [
        "routes/HTTPRoute/shop/later",
        JSON.stringify({ ...JSON.parse(record("x", [1, 1])), version: 9 }),
      ],
    ]),
  );
  const metrics = new Registry();
  const source = new RegistrySource({
    kv,
    origin: { region: "eu", cluster: "a" },
    logger: quiet,
    metrics,
  });
  let latest: SourceRevision | undefined;
  await source.start((r) => latest = r);
  try {
    const first = await until(() => latest, (r) => r.objects.some((o) => o.kind === "HTTPRoute"));
    const routes = first.objects.filter((o) => o.kind === "HTTPRoute");
    assert.deepEqual(routes.map((o) => o.metadata.name), ["split.b.eu"]);
    assert.deepEqual(routes[0].spec.parentRefs, [
      { group: "multicluster.x-k8s.io", kind: "ServiceImport", name: "web", port: 8080 },
    ]);
    assert.deepEqual(
      routes[0].spec.rules[0].backendRefs.map((r: { kind: string; weight: number }) => [
        r.kind,
        r.weight,
      ]),
      [["ServiceImport", 90], ["ServiceImport", 10]],
    );
    assert.equal(first.admitted, false); // imported routes are admitted here
    assert.equal(first.origins.get("HTTPRoute/shop/split.b.eu"), "registry");
    assert.match(metrics.render(), /aether_registry_malformed_records\{kind="route"\} 2/);

    // An unrelated change hands the route over as the very same object.
    await b.publish(
      new Map([
        ["routes/HTTPRoute/shop/split", record("split", [90, 10])],
        ["eps/shop/web/p1", "garbage"],
      ]),
    );
    const second = await until(
      () => latest,
      () => /aether_registry_malformed_records\{kind="endpoint"\} 1/.test(metrics.render()),
    );
    assert.equal(second.objects.find((o) => o.kind === "HTTPRoute"), routes[0]);
    assert.match(metrics.render(), /aether_registry_malformed_records\{kind="route"\} 0/);

    // The record gone: no route, and the revision is admitted again.
    await b.publish(new Map());
    const third = await until(() => latest, (r) => r.objects.length === 0);
    assert.equal(third.admitted, true);
  } finally {
    await source.stop();
    await b.stop();
  }
});
