/**
 * What ships is what the binaries use. The closure of each entry point (agent/main.ts,
 * controller/main.ts and cni/main.ts once it exists) over Deno's own import graph — value, type
 * and dynamic imports alike, since the agent loads its subcommands with `await import()` — holds
 * no module outside the shipped folders (none of testbed/, e2e/, bench/, tools/, scripts/,
 * examples/), no test, no test support and no test data. And the image's file list (the shipped
 * folders whole, less tests, test support and test data: `isImageSource` over `git ls-files`)
 * is exactly that closure plus the data files the binaries read by path, listed below with their
 * reasons: a file in a shipped folder that no binary imports or reads fails here, and moves out
 * (to testbed/, tools/, vendored/) or becomes test support.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { entryPoints, imageSources, shippedDirs } from "../testbed/image_files.ts";
import { isTest, isTestData, isTestSupport } from "../testbed/test_files.ts";
import { type Graph, importGraph, reachable } from "./_import_graph_test_utils.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A file the binaries need that no import reaches: read by path, or by Deno itself. */
interface DataFile {
  path: string;
  /** The module of the closure that reads it (its text names the file), or none: Deno does. */
  readBy?: string;
  why: string;
}

/** The data files the image carries besides the closure. */
const DATA_FILES: readonly DataFile[] = [
  { path: "deno.json", why: "`deno run` takes the import map and compiler options from it" },
  { path: "deno.lock", why: "`deno install --frozen` and `deno run` check npm packages by it" },
  {
    path: "proto/spiffe/workload.proto",
    readBy: "agent/identity/proto.ts",
    why: "protobufjs parses the SPIFFE Workload API's .proto text at run time",
  },
  {
    path: "proto/spire/delegated_identity.proto",
    readBy: "agent/identity/proto.ts",
    why: "protobufjs parses SPIRE's Delegated Identity API .proto text at run time",
  },
  {
    path: "proto/spire/entry.proto",
    readBy: "controller/registrar/proto.ts",
    why: "protobufjs parses SPIRE's server Entry API .proto text at run time",
  },
  {
    path: "proto/spire/types.proto",
    readBy: "controller/registrar/proto.ts",
    why: "the SPIRE API types entry.proto imports",
  },
  {
    path: "cni/forwarder.c",
    why: "not run: the source of the image's /usr/local/bin/aether-cni (compiled static by the " +
      "image builder and the Dockerfile), beside the TypeScript it forwards to (cni/handler.ts)",
  },
];

/** Why each module of a closure may not ship, sorted (pure; empty: it may). */
function closureViolations(closure: Iterable<string>): string[] {
  const out: string[] = [];
  for (const path of [...closure].sort()) {
    const top = path.split("/")[0];
    if (!shippedDirs.includes(top)) out.push(`${path}: outside the shipped folders`);
    else if (isTest(path)) out.push(`${path}: a test`);
    else if (isTestSupport(path)) out.push(`${path}: test support`);
    else if (isTestData(path)) out.push(`${path}: test data`);
  }
  return out;
}

/**
 * How an image's file list differs from the closure plus the data files (pure): `unexplained`,
 * files in it that no binary imports and no data file names; `missing`, wanted files not in it.
 */
function imageDiff(
  image: readonly string[],
  closure: ReadonlySet<string>,
  data: readonly string[],
): { unexplained: string[]; missing: string[] } {
  const want = new Set([...closure, ...data]);
  const have = new Set(image);
  return {
    unexplained: image.filter((p) => !want.has(p)).sort(),
    missing: [...want].filter((p) => !have.has(p)).sort(),
  };
}

/** The binaries, their import graph and its closure from them. */
async function binaries() {
  const entries = await entryPoints(root);
  const graph = await importGraph(root, entries);
  return { entries, graph, closure: reachable(graph.imports, entries) };
}

Deno.test("the binaries' import closure holds no workshop, tool, test or test support module", async () => {
  const { entries, graph, closure } = await binaries();
  assert.ok(entries.includes("agent/main.ts") && entries.includes("controller/main.ts"));
  assert.ok(closure.size > 100, `only ${closure.size} modules`);
  // Dynamic imports are in the graph: the agent's subcommands, loaded by `await import()`, are
  // reached only that way.
  const staticOnly = reachable(graph.staticImports, entries);
  for (const m of ["agent/offline/mod.ts", "agent/stop.ts", "agent/bootstrap/mod.ts"]) {
    assert.ok(closure.has(m) && !staticOnly.has(m), `${m}: not reached by import() alone`);
  }
  // So are JSON imports (the Envoy API descriptors).
  assert.ok(closure.has("agent/xds/envoy_api.gen.json"));
  assert.deepEqual(closureViolations(closure), []);
});

Deno.test("the closure check finds a workshop module, a tool, a test and test support", () => {
  const graph: Graph = new Map([
    ["agent/main.ts", new Set(["agent/run.ts", "lib/a.ts"])],
    ["agent/run.ts", new Set(["testbed/peers/mod.ts", "lib/a.ts"])],
    ["lib/a.ts", new Set(["lib/_test_utils.ts", "lib/x/testdata/in.json", "tools/gen.ts"])],
    ["lib/_test_utils.ts", new Set(["lib/a_test.ts", "e2e/harness.ts"])],
    ["controller/main.ts", new Set(["lib/b.ts"])],
    ["lib/b.ts", new Set(["bench/x.ts", "scripts/y.ts"])],
    ["lib/unreached.ts", new Set(["lib/unreached_test.ts"])],
  ]);
  const closure = reachable(graph, ["agent/main.ts", "controller/main.ts"]);
  assert.deepEqual(closureViolations(closure), [
    "bench/x.ts: outside the shipped folders",
    "e2e/harness.ts: outside the shipped folders",
    "lib/_test_utils.ts: test support",
    "lib/a_test.ts: a test",
    "lib/x/testdata/in.json: test data",
    "scripts/y.ts: outside the shipped folders",
    "testbed/peers/mod.ts: outside the shipped folders",
    "tools/gen.ts: outside the shipped folders",
  ]);
  assert.deepEqual(closureViolations(["agent/main.ts", "lib/b.ts", "proto/x.proto"]), []);
});

Deno.test("the image's files are the binaries' closure plus their data files", async () => {
  const { closure } = await binaries();
  for (const { path, readBy } of DATA_FILES) {
    assert.ok(!closure.has(path), `${path} is imported: not a data file`);
    if (readBy === undefined) continue;
    assert.ok(closure.has(readBy), `${path}: its reader ${readBy} ships`);
    const name = path.split("/").pop()!;
    assert.ok((await Deno.readTextFile(join(root, readBy))).includes(name), `${readBy}: ${name}`);
  }
  const image = await imageSources(root);
  assert.ok(image.includes("agent/main.ts") && image.includes("deno.lock"));
  const data = DATA_FILES.map((d) => d.path);
  assert.deepEqual(imageDiff(image, closure, data), { unexplained: [], missing: [] });
});

Deno.test("the image check finds a shipped file nothing uses and a data file gone", () => {
  const closure = new Set(["agent/main.ts", "lib/a.ts"]);
  const image = ["agent/dns/cli.ts", "agent/main.ts", "deno.json", "lib/a.ts", "lib/fixture.yaml"];
  assert.deepEqual(imageDiff(image, closure, ["deno.json", "proto/x.proto"]), {
    unexplained: ["agent/dns/cli.ts", "lib/fixture.yaml"],
    missing: ["proto/x.proto"],
  });
});
