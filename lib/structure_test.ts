/**
 * The project's module structure: no import cycle among its own modules (an `import type` counts:
 * a cycle is a cycle), and nothing imports upward. The import graph is Deno's own (`deno info
 * --json` of a module importing every source file), so it sees exactly what `deno check` sees.
 *
 * Layers, lowest first: `lib/`; `cni/` (the CNI plugin: its binary imports only lib/, and the node
 * agent runs its request handling); `agent/` and `controller/` (each imports only itself and lower
 * layers); `testbed/` (the workshop: local cluster, peers, conformance runner, test builders);
 * `e2e/` and `tools/`; `bench/`, `scripts/` and `examples/`. Tests (`*_test.ts`) and private test
 * support (`_test_utils.ts`, `_<topic>_test_utils.ts`) are leaves only tests and test support
 * import, so they may use any layer's helpers; no other module imports them. A shared type that
 * two modules would otherwise import from each other goes into a module of its own that both
 * import (as lib/gatewayapi/routes/kind.ts does).
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { isTest, isTestSupport } from "../testbed/test_files.ts";
import { type Graph, importGraph as graphOf } from "./_import_graph_test_utils.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Folders that hold no project source. */
const SKIP: readonly string[] = [".cache", ".git", "node_modules", "testdata", "dist"];

/** Top-level folders by layer, lowest first. */
const LAYERS: readonly (readonly string[])[] = [
  ["lib"],
  ["cni"],
  ["agent", "controller"],
  ["testbed"],
  ["e2e", "tools"],
  ["bench", "scripts", "examples"],
];

function* sources(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory && !SKIP.includes(e.name)) yield* sources(path);
    else if (e.isFile && e.name.endsWith(".ts")) yield path;
  }
}

/** The import graph of every .ts file under `dir`, value and type imports alike. */
async function importGraph(dir: string): Promise<Graph> {
  const files = [...sources(dir)].map((f) => relative(dir, f)).sort();
  const { imports } = await graphOf(dir, files);
  // Every source file is in the graph (else a file would escape the check unseen).
  assert.deepEqual(files.filter((f) => !imports.has(f)), []);
  return imports;
}

/**
 * The import cycles of `graph`: its strongly connected components of more than one module, and
 * modules importing themselves, each sorted, in sorted order (Tarjan's algorithm).
 */
function importCycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** Tests and test support: leaves of the layering (they may import any layer). */
const isTestCode = (path: string) => isTest(path) || isTestSupport(path);

/** The folders that ship (their modules may not import test support). */
const PRODUCT: readonly string[] = ["lib", "agent", "controller", "cni"];

/**
 * `from -> to` for every import of a non-test module into a higher layer or a sibling folder, and
 * of a product module into test support.
 */
function upwardImports(graph: Graph): string[] {
  const layer = (path: string) => {
    const top = path.split("/")[0];
    const i = LAYERS.findIndex((l) => l.includes(top));
    assert.ok(i >= 0, `${path}: its folder ${top}/ has no layer; add it to LAYERS`);
    return i;
  };
  const out: string[] = [];
  for (const [from, deps] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    if (isTestCode(from)) continue;
    const top = from.split("/")[0];
    for (const to of [...deps].sort()) {
      const up = to.split("/")[0] !== top && layer(to) >= layer(from);
      if (up || (isTestSupport(to) && PRODUCT.includes(top))) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

/**
 * The graph of lib/'s folders (`lib/<name>`), from its non-test modules: a folder imports another
 * when one of its modules does. A cycle here means two of lib's parts lean on each other.
 */
function libFolders(graph: Graph): Graph {
  const folder = (path: string) => path.split("/").slice(0, 2).join("/");
  const out: Graph = new Map();
  for (const [from, deps] of graph) {
    if (!from.startsWith("lib/") || isTestCode(from)) continue;
    const f = folder(from);
    const to = out.get(f) ?? new Set<string>();
    out.set(f, to);
    for (const d of deps) if (d.startsWith("lib/") && folder(d) !== f) to.add(folder(d));
  }
  return out;
}

/**
 * Imports that reach into a folder with a face (`mod.ts`) from outside it without going through a
 * face: std's rule, "outsiders import only a folder's mod.ts". A folder nested in a faced folder
 * may have its own face (`lib/gatewayapi/admission/mod.ts`), which outsiders may import too. Test
 * support is private by name and never behind a face. `allow`: `from -> to` pairs kept on purpose.
 */
export function faceViolations(graph: Graph, allow: ReadonlySet<string> = new Set()): string[] {
  const faces = new Set(
    [...graph.keys()].filter((p) => p.endsWith("/mod.ts")).map((p) => p.slice(0, -7)),
  );
  const out: string[] = [];
  for (const [from, deps] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    for (const to of [...deps].sort()) {
      if (to.endsWith("/mod.ts") || isTestCode(to) || allow.has(`${from} -> ${to}`)) continue;
      const parts = to.split("/");
      const crossed = parts.slice(1, -1).some((_, i) => {
        const folder = parts.slice(0, i + 2).join("/");
        return faces.has(folder) && !from.startsWith(`${folder}/`);
      }) || (faces.has(parts[0]) && !from.startsWith(`${parts[0]}/`));
      if (crossed) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

/**
 * The few imports that pass a face on purpose, each with its reason. `agent/main.ts` loads a
 * role's modules only when it runs that role (`agent translate` and `agent stop` must start
 * fast): its flags' defaults come from these two small modules, not from the roles' faces.
 */
const FACE_ALLOW: Record<string, string> = {
  "agent/main.ts -> agent/edge/defaults.ts": "the edge's flag defaults, without the edge role",
  "agent/main.ts -> agent/envoy/state.ts":
    "the default state directory, without Envoy's supervisor",
};

Deno.test("code outside a folder with a face imports only its face", async () => {
  const graph = await importGraph(root);
  assert.deepEqual(faceViolations(graph, new Set(Object.keys(FACE_ALLOW))), []);
  // An allowance whose import is gone is dropped, not kept as a loophole.
  const edges = new Set([...graph].flatMap(([f, ds]) => [...ds].map((d) => `${f} -> ${d}`)));
  assert.deepEqual(Object.keys(FACE_ALLOW).filter((a) => !edges.has(a)), []);
});

Deno.test("the face check finds an import past a face, nested faces included", () => {
  const graph: Graph = new Map([
    ["lib/g/mod.ts", new Set(["lib/g/a.ts", "lib/g/adm/mod.ts"])],
    ["lib/g/a.ts", new Set(["lib/g/adm/rules.ts", "lib/g/b.ts"])],
    ["lib/g/adm/mod.ts", new Set(["lib/g/adm/rules.ts"])],
    ["lib/g/adm/rules.ts", new Set<string>()],
    ["lib/g/b.ts", new Set<string>()],
    ["lib/g/_test_utils.ts", new Set<string>()],
    ["agent/x.ts", new Set(["lib/g/mod.ts", "lib/g/adm/mod.ts", "lib/g/b.ts"])],
    ["agent/y_test.ts", new Set(["lib/g/_test_utils.ts", "lib/g/adm/rules.ts"])],
    ["agent/z.ts", new Set(["lib/g/a.ts"])],
    ["lib/plain/p.ts", new Set<string>()],
    ["agent/w.ts", new Set(["lib/plain/p.ts"])],
  ]);
  assert.deepEqual(faceViolations(graph, new Set(["agent/z.ts -> lib/g/a.ts"])), [
    "agent/x.ts -> lib/g/b.ts",
    "agent/y_test.ts -> lib/g/adm/rules.ts",
    "lib/g/a.ts -> lib/g/adm/rules.ts",
  ]);
});

Deno.test("no import cycle and no upward import among the project's modules", async () => {
  const graph = await importGraph(root);
  // The walk found the project (a wrong root would pass on an empty graph).
  assert.ok(graph.has("agent/main.ts") && graph.has("controller/main.ts"));
  assert.ok(graph.size > 300, `only ${graph.size} modules`);
  assert.deepEqual(importCycles(graph), []);
  assert.deepEqual(upwardImports(graph), []);
  assert.deepEqual(importCycles(libFolders(graph)), []);
});

Deno.test("the structure checks find a cycle, a self-import and an upward import", () => {
  const graph: Graph = new Map([
    ["lib/a.ts", new Set(["lib/b.ts"])],
    ["lib/b.ts", new Set(["lib/c.ts"])],
    ["lib/c.ts", new Set(["lib/a.ts", "lib/d.ts"])],
    ["lib/d.ts", new Set<string>()],
    ["lib/self.ts", new Set(["lib/self.ts"])],
    ["lib/fixtures.ts", new Set(["bench/synthetic.ts"])],
    ["lib/x_test.ts", new Set(["tools/gen.ts", "e2e/peers.ts"])],
    ["agent/run.ts", new Set(["controller/status.ts", "lib/d.ts"])],
    ["controller/status.ts", new Set(["lib/d.ts"])],
    ["bench/synthetic.ts", new Set(["agent/run.ts", "e2e/peers.ts"])],
    ["e2e/peers.ts", new Set(["lib/d.ts", "lib/_test_utils.ts"])],
    ["tools/gen.ts", new Set<string>()],
    ["lib/_test_utils.ts", new Set(["tools/gen.ts"])],
    ["lib/_dns_test_utils.ts", new Set(["lib/d.ts"])],
    ["lib/uses_support.ts", new Set(["lib/_dns_test_utils.ts"])],
  ]);
  assert.deepEqual(importCycles(graph), [
    ["lib/a.ts", "lib/b.ts", "lib/c.ts"],
    ["lib/self.ts"],
  ]);
  assert.deepEqual(upwardImports(graph), [
    "agent/run.ts -> controller/status.ts",
    "lib/fixtures.ts -> bench/synthetic.ts",
    "lib/uses_support.ts -> lib/_dns_test_utils.ts",
  ]);
  assert.throws(
    () => upwardImports(new Map([["misc/x.ts", new Set(["lib/d.ts"])]])),
    /misc\/ has no layer/,
  );
  // lib/p and lib/q lean on each other through different modules; a test importing back is fine.
  const folders: Graph = new Map([
    ["lib/p/a.ts", new Set(["lib/q/b.ts", "lib/p/e.ts"])],
    ["lib/q/c.ts", new Set(["lib/p/d.ts"])],
    ["lib/r/f.ts", new Set(["lib/p/a.ts"])],
    ["lib/p/x_test.ts", new Set(["lib/r/f.ts"])],
  ]);
  assert.deepEqual(importCycles(folders), []);
  assert.deepEqual(importCycles(libFolders(folders)), [["lib/p", "lib/q"]]);
});

Deno.test("the import graph holds type-only imports, so a type-only cycle is found", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-structure-" });
  try {
    await Deno.writeTextFile(join(dir, "deno.json"), "{}");
    await Deno.mkdir(join(dir, "lib"));
    await Deno.writeTextFile(
      join(dir, "lib/a.ts"),
      'import type { B } from "./b.ts";\nexport type A = { b?: B };\n',
    );
    await Deno.writeTextFile(
      join(dir, "lib/b.ts"),
      'import type { A } from "./a.ts";\nexport type B = { a?: A };\n',
    );
    await Deno.writeTextFile(join(dir, "lib/c.ts"), 'import "./a.ts";\n');
    const graph = await importGraph(dir);
    assert.deepEqual(importCycles(graph), [["lib/a.ts", "lib/b.ts"]]);
    assert.deepEqual(graph.get("lib/c.ts"), new Set(["lib/a.ts"]));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
