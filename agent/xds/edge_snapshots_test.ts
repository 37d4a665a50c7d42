import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { Engine } from "../../lib/engine/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import type { SourceObject } from "../../lib/source/mod.ts";
import { SnapshotCache } from "./cache/mod.ts";
import { EdgeSnapshots } from "./edge_snapshots.ts";
import { TypeUrl } from "./proto.ts";

const objects = (): SourceObject[] =>
  parseAllDocuments(
    Deno.readTextFileSync(
      new URL("../../lib/gatewayapi/testdata/basic_http.in.yaml", import.meta.url),
    ),
  ).map((d) => d.toJS()).filter((o) => o?.kind);

/** The same objects with every EndpointSlice's first address moved by one. */
function movedEndpoints(objs: SourceObject[]): SourceObject[] {
  return objs.map((o) => {
    if (o.kind !== "EndpointSlice") return o;
    const eps = (o as unknown as { endpoints: { addresses: string[] }[] }).endpoints;
    const [first, ...rest] = eps;
    const moved = first.addresses[0].replace(/\d+$/, (n) => String((Number(n) + 1) % 250));
    return { ...o, endpoints: [{ ...first, addresses: [moved] }, ...rest] } as SourceObject;
  });
}

Deno.test("edge snapshots: an endpoint-only change pushes EDS alone; a secrets refresh SDS alone", () => {
  const cache = new SnapshotCache();
  let secretValue = "one";
  const snapshots = new EdgeSnapshots({
    cache,
    secrets: () => [{
      name: "edge-svid",
      resource: { name: "edge-svid", generic_secret: { secret: { inline_string: secretValue } } },
    }],
  });
  const engine = new Engine({
    logger: new Logger("test", () => {}),
    metrics: new Registry(),
    sinks: [snapshots],
  });
  const first = objects();
  assert.ok(first.some((o) => o.kind === "EndpointSlice"), "the case has endpoints");
  engine.apply({ revision: 1, objects: first, problems: [], origins: new Map() });
  const before = cache.getDefaultSnapshot()!;
  const versions = (s: typeof before) =>
    Object.fromEntries(Object.values(TypeUrl).map((t) => [t, s.typeVersion(t)]));
  const v1 = versions(before);

  engine.apply({ revision: 2, objects: movedEndpoints(first), problems: [], origins: new Map() });
  const v2 = versions(cache.getDefaultSnapshot()!);
  const changed = Object.keys(v1).filter((t) => v1[t] !== v2[t]);
  assert.deepEqual(changed, [TypeUrl.endpoint]);
  assert.equal(engine.status.servedRevision, 2);

  secretValue = "two";
  snapshots.refreshSecrets();
  const v3 = versions(cache.getDefaultSnapshot()!);
  assert.deepEqual(Object.keys(v2).filter((t) => v2[t] !== v3[t]), [TypeUrl.secret]);
});
