/**
 * No test on main is skipped or focused: no `ignore:`/`only:` option and no `Deno.test.ignore`,
 * `Deno.test.only` or `t.step.ignore`-style call in any test file (a test that cannot run here is
 * not written, and the docs say why).
 */
import { assertEquals } from "../testbed/assert.ts";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const skipped = [/\b(ignore|only)\s*:\s*[^\s/]/, /\.(only|ignore)\s*\(/];

async function* testFiles(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const path = join(dir, e.name);
    if (e.isDirectory) yield* testFiles(path);
    else if (e.isFile && e.name.endsWith("_test.ts")) yield path;
  }
}

Deno.test("no test file skips or focuses a test", async () => {
  const found: string[] = [];
  for await (const file of testFiles(root)) {
    const lines = (await Deno.readTextFile(file)).split("\n");
    lines.forEach((line, i) => {
      const code = /^\s*(\*|\/\*|\/\/)/.test(line) ? "" : line.replace(/\/\/.*$/, "");
      if (skipped.some((re) => re.test(code))) found.push(`${relative(root, file)}:${i + 1}`);
    });
  }
  assertEquals(found, []);
});

Deno.test("the skip check sees what it looks for", () => {
  // Each option and call form, for both words (made here, so this file holds no such line).
  const bad = ["ignore", "only"].flatMap((
    w,
  ) => [`  ${w}: true,`, `Deno.test.${w}(`, `t.step.${w} (`]);
  for (const line of bad) {
    assertEquals(skipped.some((re) => re.test(line)), true, line);
  }
  const fine = ["resyncMs: 60_000,", "--ignore-not-found", "const ignored = 1;"];
  for (const line of fine) {
    assertEquals(skipped.some((re) => re.test(line)), false, line);
  }
});
