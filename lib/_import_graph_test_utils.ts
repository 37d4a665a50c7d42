/**
 * Deno's own import graph of the project (`deno info --json`), for the structure and
 * shipped-closure tests: value, type and dynamic imports alike, so it sees what `deno check` and
 * `deno install --entrypoint` see. Paths are relative to the folder read; modules outside it (npm,
 * `node:`) are left out.
 * @module
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Module path (relative to the repository) → the project modules it imports. */
export type Graph = Map<string, Set<string>>;

/** The import graph of some modules, and the part of it written as static imports. */
export interface ImportGraph {
  /** Every import: static value and type imports and `import()` with a literal specifier. */
  imports: Graph;
  /** The static imports only (no `import()`), to tell what only a dynamic import reaches. */
  staticImports: Graph;
}

interface InfoDependency {
  code?: { specifier?: string };
  type?: { specifier?: string };
  isDynamic?: boolean;
}

interface InfoModule {
  specifier: string;
  dependencies?: InfoDependency[];
}

/**
 * The import graph of `files` (paths relative to `dir`) and every project module they reach, read
 * with `dir`'s deno.json.
 */
export async function importGraph(dir: string, files: readonly string[]): Promise<ImportGraph> {
  const tmp = await Deno.makeTempDir({ prefix: "aether-import-graph-" });
  try {
    const entry = join(tmp, "all.ts");
    await Deno.writeTextFile(
      entry,
      files.map((f) => `import "${pathToFileURL(join(dir, f)).href}";\n`).join(""),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", join(dir, "deno.json"), entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, `deno info failed: ${new TextDecoder().decode(out.stderr)}`);
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: InfoModule[] };
    return graphOfInfo(info.modules, pathToFileURL(dir).href + "/");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

/** The graph of `deno info --json`'s modules under the file URL `base` (pure). */
export function graphOfInfo(modules: readonly InfoModule[], base: string): ImportGraph {
  const local = (s: string | undefined) =>
    s?.startsWith(base) ? relative(fileURLToPath(base), fileURLToPath(s)) : undefined;
  const imports: Graph = new Map();
  const staticImports: Graph = new Map();
  for (const m of modules) {
    const from = local(m.specifier);
    if (from === undefined) continue;
    const all = new Set<string>(), fixed = new Set<string>();
    for (const d of m.dependencies ?? []) {
      for (const s of [d.code?.specifier, d.type?.specifier]) {
        const path = local(s);
        if (path === undefined) continue;
        all.add(path);
        if (!d.isDynamic) fixed.add(path);
      }
    }
    imports.set(from, all);
    staticImports.set(from, fixed);
  }
  return { imports, staticImports };
}

/** The modules `graph` reaches from `roots`, the roots included (pure). */
export function reachable(graph: Graph, roots: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const todo = [...roots];
  for (let m = todo.pop(); m !== undefined; m = todo.pop()) {
    if (seen.has(m)) continue;
    seen.add(m);
    todo.push(...graph.get(m) ?? []);
  }
  return seen;
}
