import assert from "node:assert/strict";
import { parseYamlObjects } from "./yaml_docs.ts";
import { defaultParseLimits } from "./yaml_limits.ts";
import { splitYamlDocuments } from "./yaml_split.ts";

const route = (name: string) =>
  `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: ${name}\n  creationTimestamp: 2026-01-01T00:00:00Z\nspec: {}\n`;

function bomb(levels: number): string {
  const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < levels; i++) {
    lines.push(`a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(",")}]`);
  }
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  ` +
    lines.join("\n  ") + "\n";
}

Deno.test("yaml: timestamps stay strings (core schema), lines count from the file's start", () => {
  const text = route("a") + "---\n" + route("b") + "---\nkind: [unclosed\n";
  const r = parseYamlObjects("f.yaml", text);
  assert.deepEqual(r.objects.map((o) => o.metadata.name), ["a", "b"]);
  assert.equal(typeof r.objects[0].metadata.creationTimestamp, "string");
  assert.equal(r.invalid, true);
  assert.equal(r.problems.length, 1);
  // "kind: [unclosed" is on line 15; the parser reports the line it gave up on (15 or 16).
  assert.match(r.problems[0].message, /^document 3: invalid YAML at line 1[56]: /);
});

Deno.test("yaml: hostile input becomes a problem naming the file, never an exception", () => {
  const cases: [string, string, RegExp][] = [
    ["alias bomb", bomb(9), /aliases expand to more than/],
    ["duplicate keys", "apiVersion: v1\nkind: A\nkind: B\nmetadata: {name: x}\n", /duplicat/],
    [
      "10k-deep block nesting (a 50 MB file)",
      Array.from({ length: 10000 }, (_, i) => " ".repeat(i) + "k:").join("\n"),
      /larger than/,
    ],
    ["10k-deep flow nesting", "a: " + "[".repeat(10000) + "]".repeat(10000) + "\n", /nesting|deep/],
    [
      "3k-deep block nesting",
      Array.from({ length: 3000 }, (_, i) => " ".repeat(i) + "k:").join("\n") + " 1\n",
      /nesting|deep/,
    ],
    ["truncated", route("t").slice(0, 60) + "\n  - [", /invalid YAML|expected/],
    ["tab indentation", "a:\n\t- b\n", /invalid YAML/],
  ];
  for (const [what, text, want] of cases) {
    const r = parseYamlObjects("evil.yaml", text);
    assert.equal(r.objects.length, 0, what);
    assert.ok(r.problems.length >= 1, what);
    assert.equal(r.problems[0].source, "evil.yaml", what);
    assert.match(r.problems.map((p) => p.message).join("\n"), want, what);
  }
});

Deno.test("yaml: a 1 MB string is fine; file size and document count have limits", () => {
  const big = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {x: "${
    "x".repeat(1 << 20)
  }"}\n`;
  assert.equal(parseYamlObjects("big.yaml", big).objects.length, 1);
  const limits = { ...defaultParseLimits, maxFileBytes: 1000, maxDocuments: 3 };
  assert.match(parseYamlObjects("big.yaml", big, undefined, limits).problems[0].message, /larger/);
  const many = [1, 2, 3, 4].map((i) => route(`r${i}`)).join("---\n");
  const r = parseYamlObjects("many.yaml", many, undefined, limits);
  assert.equal(r.invalid, true);
  assert.match(r.problems[0].message, /4 documents, more than 3/);
  // Aliases within the limit are expanded into separate copies.
  const shared = parseYamlObjects(
    "s.yaml",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata:\n  a: &x {k: v}\n  b: *x\n",
  ).objects[0] as unknown as { data: { a: object; b: object } };
  assert.deepEqual(shared.data.a, shared.data.b);
  assert.notEqual(shared.data.a, shared.data.b);
});

Deno.test("yaml: only changed documents are parsed again; unchanged ones are the same objects", () => {
  const first = parseYamlObjects("f.yaml", [route("a"), route("b"), route("c")].join("---\n"));
  const second = parseYamlObjects(
    "f.yaml",
    [route("a"), route("b2"), route("c")].join("---\n"),
    first,
  );
  assert.equal(second.objects[0], first.objects[0]);
  assert.notEqual(second.objects[1], first.objects[1]);
  assert.equal(second.objects[2], first.objects[2]);
  assert.equal(second.objects[1].metadata.name, "b2");
});

Deno.test("yaml split: markers, directives and content on the marker line", () => {
  const chunks = splitYamlDocuments("a: 1\n--- # c\nb: 2\n%YAML 1.2\n---\nc: 3\n--- {d: 4}\n");
  assert.deepEqual(chunks.map((c) => c.line), [1, 2, 4, 7]);
  assert.equal(chunks[2].text, "%YAML 1.2\n---\nc: 3");
  assert.equal(chunks[3].text, "--- {d: 4}\n");
  const crlf = parseYamlObjects(
    "w.yaml",
    [route("a"), route("b")].join("---\n").replaceAll("\n", "\r\n"),
  );
  assert.deepEqual(crlf.objects.map((o) => o.metadata.name), ["a", "b"]);
  assert.deepEqual(crlf.problems, []);
});
