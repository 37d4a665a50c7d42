import { assertEquals } from "../../testbed/assert.ts";
import { Logger } from "../log/mod.ts";
import { Registry } from "../metrics/mod.ts";
import type { SourceObject, SourceRevision } from "../source/mod.ts";
import { Engine, type EngineOptions } from "./engine.ts";
import type { Resolved, Sink } from "./types.ts";
import { HTTP_ROUTE } from "../gatewayapi/mod.ts";
import type { RouteKindDef } from "../gatewayapi/mod.ts";

/** A sink that keeps what it was given. */
class Recorder implements Sink {
  seen: Resolved[] = [];
  constructor(readonly name = "recorder") {}
  apply(r: Resolved): void {
    this.seen.push(r);
  }
}

const engineWith = (o: Partial<EngineOptions> = {}) =>
  new Engine({
    logger: new Logger("test", () => {}),
    metrics: new Registry(),
    sinks: [new Recorder()],
    ...o,
  });

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

Deno.test("engine status: a condition keeps its lastTransitionTime until its status changes", () => {
  let clock = new Date("2026-01-01T00:00:00Z");
  const engine = engineWith({ now: () => clock });
  let revision = 0;
  const apply = (objs: SourceObject[]) => {
    const snap: SourceRevision = {
      revision: ++revision,
      objects: objs,
      problems: [],
      origins: new Map(),
    };
    engine.apply(snap);
    // deno-lint-ignore no-explicit-any
    const byKind = (kind: string): any =>
      engine.status.objects.find((o) => o.kind === kind)?.status;
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

Deno.test("engine: a source revision's kinds gate the route kinds served (CRD not installed)", () => {
  const engine = engineWith({ now: () => new Date("2026-01-01T00:00:00Z") });
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
    engine.apply({ revision, objects: tcp, problems: [], origins: new Map(), kinds });
    // deno-lint-ignore no-explicit-any
    const status = (kind: string): any => engine.status.objects.find((o) => o.kind === kind)!;
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

Deno.test("engine: a source revision marked admitted (from the API server) is not admitted again", () => {
  const engine = engineWith({ now: () => new Date("2026-01-01T00:00:00Z") });
  // A route the API server would have refused (Exact path not absolute): only admission sees it.
  const route: SourceObject = {
    ...objects()[2],
    spec: {
      parentRefs: [{ name: "edge" }],
      rules: [{ matches: [{ path: { type: "Exact", value: "x" } }] }],
    },
  };
  const run = (revision: number, admitted?: boolean) => {
    engine.apply({
      revision,
      objects: [...objects().slice(0, 2), route],
      problems: [],
      origins: new Map(),
      admitted,
    });
    return engine.status.problems.map((p) => p.kind);
  };
  assertEquals(run(1), ["HTTPRoute"]);
  assertEquals(run(2, true), []);
});

Deno.test("engine: a revision reaching a CEL-library rule is applied once the library has loaded", async () => {
  const logged: string[] = [];
  const engine = engineWith({
    logger: new Logger("test", (line) => void logged.push(line)),
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
  assertEquals(engine.resolveState.cel.loaded, false);
  engine.apply(revision(1, cors(["*", "https://a.example"])));
  // Not served (nor failed) yet: the library is loading.
  assertEquals([engine.status.servedRevision, engine.status.error], [undefined, undefined]);
  // A newer revision arrives while it loads: that one is what gets applied.
  const applied = engine.apply(revision(2, cors(["*", "https://b.example"])));
  assertEquals(engine.status.servedRevision, undefined);
  await applied;
  assertEquals(engine.status.servedRevision, 2);
  assertEquals(engine.status.problems.map((p) => `${p.field}: ${p.message}`), [
    "spec.rules[0].filters[0].cors.allowOrigins: AllowOrigins cannot contain '*' alongside other origins",
  ]);
  assertEquals(logged.some((l) => l.includes("loading the CEL library")), true);
  // Loaded: later revisions are applied at once.
  engine.apply(revision(3, cors(["*"])));
  assertEquals([engine.status.servedRevision, engine.status.problems], [3, []]);
});

/** A sink that throws while `failing` is set, and otherwise keeps the revision it last applied. */
class Flaky implements Sink {
  readonly name = "flaky";
  failing = false;
  lastGood?: number;
  apply(r: Resolved): void {
    if (this.failing) throw new Error("disk full");
    this.lastGood = r.input.revision;
  }
  version(): string | undefined {
    return this.lastGood === undefined ? undefined : `v${this.lastGood}`;
  }
}

const revisionOf = (n: number, objs: SourceObject[] = objects()): SourceRevision => ({
  revision: n,
  objects: objs,
  problems: [],
  origins: new Map(),
});

Deno.test("engine: one revision to two sinks, one throwing: the other applies, the thrower keeps its last good", async () => {
  const logged: string[] = [];
  const metrics = new Registry();
  const flaky = new Flaky();
  const recorder = new Recorder("dns");
  const engine = engineWith({
    logger: new Logger("test", (line) => void logged.push(line)),
    metrics,
    sinks: [flaky, recorder],
  });
  await engine.apply(revisionOf(1));
  assertEquals([flaky.lastGood, recorder.seen.length], [1, 1]);
  assertEquals(engine.status.servedRevision, 1);
  assertEquals(engine.status.version, "v1");

  flaky.failing = true;
  await engine.apply(revisionOf(2));
  // The other sink got revision 2 — the same resolve result object the thrower was offered.
  assertEquals(recorder.seen.map((r) => r.input.revision), [1, 2]);
  assertEquals(flaky.lastGood, 1);
  assertEquals(engine.status.sinks, {
    flaky: { revision: 1, error: "disk full" },
    dns: { revision: 2 },
  });
  assertEquals(engine.status.error, "flaky failed: disk full");
  assertEquals(engine.status.servedRevision, 1, "not every sink serves revision 2");
  assertEquals(engine.status.version, "v1", "the thrower still serves its last good");
  assertEquals(engine.status.revision, 2);
  assertEquals(logged.some((l) => l.includes('"sink":"flaky"') && l.includes("disk full")), true);
  const text = metrics.render();
  assertEquals(text.includes('aether_config_failures_total{stage="flaky"} 1'), true, text);

  flaky.failing = false;
  await engine.apply(revisionOf(3));
  assertEquals([flaky.lastGood, engine.status.servedRevision, engine.status.error], [
    3,
    3,
    undefined,
  ]);
});

Deno.test("engine: a revision that fails to resolve reaches no sink; each keeps serving", async () => {
  const recorder = new Recorder();
  // A route kind whose conversion throws on a route named "boom": resolve itself fails.
  const boom: RouteKindDef = {
    ...HTTP_ROUTE,
    convert: (backends, route, mesh) => {
      if (route.metadata.name === "boom") throw new Error("conversion broke");
      return HTTP_ROUTE.convert(backends, route, mesh);
    },
  };
  const engine = engineWith({ sinks: [recorder], resolve: { routeKinds: [boom] } });
  await engine.apply(revisionOf(1));
  const route = objects()[2];
  await engine.apply({
    ...revisionOf(2, [...objects(), { ...route, metadata: { ...route.metadata, name: "boom" } }]),
    problems: [{ kind: "File", name: "x.yaml", field: "", message: "bad", source: "x.yaml" }],
  });
  assertEquals(recorder.seen.map((r) => r.input.revision), [1]);
  assertEquals(engine.status.servedRevision, 1);
  assertEquals(engine.status.revision, 2);
  assertEquals(engine.status.error, "resolve failed: conversion broke");
  assertEquals(engine.status.problems.map((p) => p.message), ["bad"]);
});

Deno.test("engine: every sink gets the same resolve result; problems carry their origin", async () => {
  const a = new Recorder("a"), b = new Recorder("b");
  const engine = engineWith({ sinks: [a, b] });
  const bad: SourceObject = {
    ...objects()[2],
    spec: {
      parentRefs: [{ name: "edge" }],
      rules: [{ matches: [{ path: { type: "Exact", value: "x" } }] }],
    },
  };
  await engine.apply({
    ...revisionOf(1, [...objects().slice(0, 2), bad]),
    origins: new Map([["HTTPRoute/infra/web", "routes/web.yaml"]]),
  });
  assertEquals(a.seen[0].result === b.seen[0].result, true);
  assertEquals(a.seen[0].problems.map((p) => p.source), ["routes/web.yaml"]);
  assertEquals(engine.status.problems, a.seen[0].problems);
});

Deno.test("engine: two sinks of one name are refused", () => {
  let error = "";
  try {
    engineWith({ sinks: [new Recorder("x"), new Recorder("x")] });
  } catch (e) {
    error = (e as Error).message;
  }
  assertEquals(error, "two sinks are named x: each needs its own name");
});
