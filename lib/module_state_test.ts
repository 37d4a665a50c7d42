/**
 * No module-level mutable state in lib/, agent/ and controller/: memos and "last" singletons belong to an
 * owned object (ResolveState, TranslateMemo, Encodings) that the caller passes in. This test reads
 * every source file and fails on a top-level `let`/`var`, or a top-level WeakMap/WeakSet, or an
 * empty Map/Set (a Map or Set filled from a literal list is a constant lookup table).
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The only exceptions, each with its reason. Nothing here holds configuration state: two
 * resolvers or translators in one process cannot see each other through them.
 */
const ALLOWED: Record<string, string> = {
  // The parsed Envoy protos: loaded once from the npm package's files, read-only afterwards.
  "agent/xds/proto.ts:let cached": "lazy constant",
  // Message types by name per (read-only) Root: lookups of that constant.
  // The DNS answer allocator: a bump pointer into a byte slab that is never reused (a full one is
  // dropped for a fresh one). It holds no configuration, only fresh zeroed bytes; per-answer typed
  // arrays cost ten times more (docs/dns.md).
  "agent/dns/wire_answer.ts:let slab": "allocator, no configuration",
  "agent/dns/wire_answer.ts:let slabOff": "allocator, no configuration",
};

const STATE = /^(?:export\s+)?(let|var)\s+([A-Za-z_$][\w$]*)/;
const CONST = /^(?:export\s+)?const\s+([A-Za-z_$][\w$]*)/;
const CONTAINER = /=\s*new\s+(WeakMap|WeakSet|WeakRef|Map|Set)\b(<[\s\S]*?>)?\s*\(\s*(\))?/;

function* sources(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory && e.name !== "testdata") yield* sources(path);
    else if (e.isFile && e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) yield path;
  }
}

/** `<file>:<let|var|const> <name>` for every top-level declaration holding mutable state. */
function findState(file: string, text: string): string[] {
  const out: string[] = [];
  const lines = text.split("\n");
  for (const [i, line] of lines.entries()) {
    const s = STATE.exec(line);
    if (s) out.push(`${file}:${s[1]} ${s[2]}`);
    const c = CONST.exec(line);
    if (!c) continue;
    // The whole statement: up to the first line ending with ";".
    let end = i;
    while (end < lines.length - 1 && !lines[end].trimEnd().endsWith(";")) end++;
    const made = CONTAINER.exec(lines.slice(i, end + 1).join("\n"));
    // A Map/Set from a literal list is a lookup table; an empty one, or any weak one, is state.
    if (made && (made[1].startsWith("Weak") || made[3] === ")")) out.push(`${file}:const ${c[1]}`);
  }
  return out;
}

Deno.test("no module-level mutable state in lib/, agent/ and controller/", () => {
  const found: string[] = [];
  for (const dir of ["lib", "agent", "controller"]) {
    for (const path of sources(join(root, dir))) {
      found.push(...findState(relative(root, path), Deno.readTextFileSync(path)));
    }
  }
  assert.deepEqual(found.filter((f) => !(f in ALLOWED)), []);
  // An exception whose declaration is gone is dropped from the list, not kept as a loophole.
  assert.deepEqual(Object.keys(ALLOWED).filter((a) => !found.includes(a)), []);
});

Deno.test("the module-state check finds a top-level memo, singleton and empty Map", () => {
  const text = [
    "const memo = new WeakMap<object, string>();",
    "const long = new WeakMap<",
    "  Record<string, unknown>,",
    "  string",
    ">();",
    "let last: string | undefined;",
    "export const index: Map<string, number> = new Map();",
    'const TABLE = new Set(["a", "b"]);',
    "  let inner = 1;",
  ].join("\n");
  assert.deepEqual(findState("x.ts", text), [
    "x.ts:const memo",
    "x.ts:const long",
    "x.ts:let last",
    "x.ts:const index",
  ]);
});
