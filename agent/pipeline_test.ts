import { assertEquals } from "../testbed/assert.ts";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import type { SourceObject, SourceRevision } from "../lib/source/types.ts";
import { Pipeline } from "./pipeline.ts";
import { SnapshotCache } from "./xds/cache/mod.ts";

const GW = "gateway.networking.k8s.io/v1";
const objects = (): SourceObject[] => [
  {
    apiVersion: GW,
    kind: "GatewayClass",
    metadata: { name: "aether", generation: 1 },
    spec: { controllerName: "gateway.aether.io/edge" },
  },
  {
    apiVersion: GW,
    kind: "Gateway",
    metadata: { name: "edge", namespace: "infra", generation: 1 },
    spec: {
      gatewayClassName: "aether",
      listeners: [{
        name: "http",
        port: 8080,
        protocol: "HTTP",
        allowedRoutes: { namespaces: { from: "All" } },
      }],
    },
  },
  {
    apiVersion: GW,
    kind: "HTTPRoute",
    metadata: { name: "web", namespace: "infra", generation: 1 },
    spec: { parentRefs: [{ name: "edge" }], rules: [{}] },
  },
];

Deno.test("pipeline /status: a condition keeps its lastTransitionTime until its status changes", () => {
  let clock = new Date("2026-01-01T00:00:00Z");
  const pipeline = new Pipeline({
    cache: new SnapshotCache(),
    logger: new Logger("test", () => {}),
    metrics: new Registry(),
    now: () => clock,
  });
  let revision = 0;
  const apply = (objs: SourceObject[]) => {
    const snap: SourceRevision = {
      revision: ++revision,
      objects: objs,
      problems: [],
      origins: new Map(),
    };
    pipeline.apply(snap);
    // deno-lint-ignore no-explicit-any
    const byKind = (kind: string): any =>
      pipeline.status.objects.find((o) => o.kind === kind)?.status;
    return {
      gateway: byKind("Gateway").conditions.map((c: { lastTransitionTime: string }) =>
        c.lastTransitionTime
      ),
      route: byKind("HTTPRoute").parents[0].conditions.map((
        c: { type: string; status: string; lastTransitionTime: string },
      ) => `${c.type}=${c.status}@${c.lastTransitionTime}`),
    };
  };
  const original = objects();
  const first = apply(original);
  assertEquals(new Set(first.gateway), new Set(["2026-01-01T00:00:00Z"]));
  assertEquals(first.route, [
    "Accepted=True@2026-01-01T00:00:00Z",
    "ResolvedRefs=True@2026-01-01T00:00:00Z",
  ]);

  // An unrelated edit a day later: every time stays.
  clock = new Date("2026-01-02T00:00:00Z");
  const unrelated = [...objects(), {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "x", namespace: "infra" },
    spec: { ports: [{ port: 80 }] },
  }];
  assertEquals(apply(unrelated), first);

  // The route's backend does not exist: ResolvedRefs flips, only it moves.
  clock = new Date("2026-01-03T00:00:00Z");
  const moved = objects();
  (moved[2].spec as { rules: unknown[] }).rules = [{
    backendRefs: [{ name: "missing", port: 80 }],
  }];
  const after = apply(moved);
  assertEquals(after.gateway, first.gateway);
  assertEquals(after.route, [
    "Accepted=True@2026-01-01T00:00:00Z",
    "ResolvedRefs=False@2026-01-03T00:00:00Z",
  ]);

  // The very same objects again (the merge of an unchanged computed status is skipped): no move.
  clock = new Date("2026-01-04T00:00:00Z");
  assertEquals(apply(moved), after);

  // Back to the first objects themselves: ResolvedRefs flips back, stamped now.
  clock = new Date("2026-01-05T00:00:00Z");
  const back = apply(original);
  assertEquals(back.gateway, first.gateway);
  assertEquals(back.route, [
    "Accepted=True@2026-01-01T00:00:00Z",
    "ResolvedRefs=True@2026-01-05T00:00:00Z",
  ]);
});

Deno.test("pipeline: a source revision's kinds gate the route kinds served (CRD not installed)", () => {
  const pipeline = new Pipeline({
    cache: new SnapshotCache(),
    logger: new Logger("test", () => {}),
    metrics: new Registry(),
    now: () => new Date("2026-01-01T00:00:00Z"),
  });
  const tcp: SourceObject[] = [
    objects()[0],
    {
      apiVersion: GW,
      kind: "Gateway",
      metadata: { name: "edge", namespace: "infra", generation: 1 },
      spec: {
        gatewayClassName: "aether",
        listeners: [{ name: "db", port: 5432, protocol: "TCP" }],
      },
    },
  ];
  const run = (revision: number, kinds?: string[]) => {
    pipeline.apply({ revision, objects: tcp, problems: [], origins: new Map(), kinds });
    // deno-lint-ignore no-explicit-any
    const status = (kind: string): any => pipeline.status.objects.find((o) => o.kind === kind)!;
    return {
      features: status("GatewayClass").status.supportedFeatures.map((f: { name: string }) => f.name)
        .filter((f: string) => f.endsWith("Route")),
      listener: status("Gateway").status.listeners[0].conditions
        .filter((c: { type: string }) => c.type === "Accepted")
        .map((c: { reason: string }) => c.reason),
    };
  };
  assertEquals(run(1, ["GatewayClass", "Gateway", "HTTPRoute"]), {
    features: ["HTTPRoute"],
    listener: ["UnsupportedProtocol"],
  });
  assertEquals(run(2), {
    features: ["GRPCRoute", "HTTPRoute", "TCPRoute", "TLSRoute", "UDPRoute"],
    listener: ["Accepted"],
  });
});

Deno.test("pipeline: a source revision marked admitted (from the API server) is not admitted again", () => {
  const pipeline = new Pipeline({
    cache: new SnapshotCache(),
    logger: new Logger("test", () => {}),
    metrics: new Registry(),
    now: () => new Date("2026-01-01T00:00:00Z"),
  });
  // A route the API server would have refused (Exact path not absolute): only admission sees it.
  const route: SourceObject = {
    ...objects()[2],
    spec: {
      parentRefs: [{ name: "edge" }],
      rules: [{ matches: [{ path: { type: "Exact", value: "x" } }] }],
    },
  };
  const run = (revision: number, admitted?: boolean) => {
    pipeline.apply({
      revision,
      objects: [...objects().slice(0, 2), route],
      problems: [],
      origins: new Map(),
      admitted,
    });
    return pipeline.status.problems.map((p) => p.kind);
  };
  assertEquals(run(1), ["HTTPRoute"]);
  assertEquals(run(2, true), []);
});

Deno.test("pipeline: a revision reaching a CEL-library rule is applied once the library has loaded", async () => {
  const logged: string[] = [];
  const pipeline = new Pipeline({
    cache: new SnapshotCache(),
    logger: new Logger("test", (line) => void logged.push(line)),
    metrics: new Registry(),
    now: () => new Date("2026-01-01T00:00:00Z"),
  });
  // A CORS origin list may not hold "*" beside other origins: a rule without a hand predicate.
  const cors = (origins: string[]): SourceObject => ({
    ...objects()[2],
    spec: {
      parentRefs: [{ name: "edge" }],
      rules: [{ filters: [{ type: "CORS", cors: { allowOrigins: origins } }] }],
    },
  });
  const revision = (n: number, route: SourceObject): SourceRevision => ({
    revision: n,
    objects: [...objects().slice(0, 2), route],
    problems: [],
    origins: new Map(),
  });
  assertEquals(pipeline.resolveState.cel.loaded, false);
  pipeline.apply(revision(1, cors(["*", "https://a.example"])));
  // Not served (nor failed) yet: the library is loading.
  assertEquals([pipeline.status.servedRevision, pipeline.status.error], [undefined, undefined]);
  // A newer revision arrives while it loads: that one is what gets applied.
  pipeline.apply(revision(2, cors(["*", "https://b.example"])));
  await pipeline.resolveState.cel.load();
  await new Promise((r) => setTimeout(r, 0));
  assertEquals(pipeline.status.servedRevision, 2);
  assertEquals(pipeline.status.problems.map((p) => `${p.field}: ${p.message}`), [
    "spec.rules[0].filters[0].cors.allowOrigins: AllowOrigins cannot contain '*' alongside other origins",
  ]);
  assertEquals(logged.some((l) => l.includes("loading the CEL library")), true);
  // Loaded: later revisions are applied at once.
  pipeline.apply(revision(3, cors(["*"])));
  assertEquals([pipeline.status.servedRevision, pipeline.status.problems], [3, []]);
});
