import assert from "node:assert/strict";
import { join } from "node:path";
import { chunkedWriter, JsonList, JsonObject, writeJson } from "./json_out.ts";
import { outputDocument, streamedDocument, translateConfig } from "./mod.ts";

/** What writeJson prints for `value`, as one string. */
function printed(value: unknown): string {
  let text = "";
  writeJson(value, (t) => void (text += t));
  return text;
}

/**
 * `value` with every object and array down to `depth` levels turned into a JsonObject / JsonList
 * (made lazily, as the translate command makes its lists); deeper ones stay plain.
 */
function streamedTo(value: unknown, depth: number): unknown {
  if (depth === 0 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    return new JsonList({
      *[Symbol.iterator]() {
        for (const item of value) yield streamedTo(item, depth - 1);
      },
    });
  }
  if ("toJSON" in value) return value;
  return new JsonObject({
    *[Symbol.iterator]() {
      for (const [k, v] of Object.entries(value)) yield [k, streamedTo(v, depth - 1)] as const;
    },
  });
}

/** Edge cases of JSON.stringify's format, each printed streamed at every depth. */
const GOLDEN: Record<string, unknown> = {
  "empty object": {},
  "empty list": [],
  "empty lists and objects inside": { a: [], b: {}, c: [[], {}, [[]]], d: { e: { f: [] } } },
  "nested arrays": [[1, [2, [3, [4, []]]]], [[["deep"]]], [null, true, false]],
  "unicode": {
    "ключ": "значение",
    "emoji 🛰️": ["👩‍👩‍👧", "\u{1F600}"],
    "escapes": 'quote " backslash \\ newline \n tab \t nul \u0000 del \u007f',
    "separators": "\u2028 \u2029",
    "lone surrogates": "\ud800 \udfff x\ud83d",
    "": "empty key",
  },
  "numbers": { zero: 0, minusZero: -0, big: 1e21, small: 5e-324, nan: NaN, inf: -Infinity },
  "left out and null": {
    gone: undefined,
    fn: () => 1,
    sym: Symbol("x"),
    kept: null,
    list: [undefined, () => 1, Symbol("y"), 1],
  },
  "only left-out entries": { a: undefined, b: undefined },
  "toJSON": { when: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), list: [new Date(0)] },
  "strings with newlines at depth": [{ a: { b: ["line 1\nline 2", { c: "x\ny" }] } }],
  "a resource-like document": {
    role: "edge",
    proxies: [{
      nodeId: "n",
      version: "0123456789abcdef",
      resources: {
        Listener: [{ name: "l", address: { socket_address: { port_value: 8080 } } }],
        Cluster: [],
        Secret: [{ name: "s" }],
      },
    }],
    objects: [],
    problems: [{ kind: "HTTPRoute", name: "r", field: "", message: 'ü "quoted"' }],
  },
};

Deno.test("json out: streamed at every depth, the bytes of JSON.stringify(value, null, 2)", () => {
  for (const [name, value] of Object.entries(GOLDEN)) {
    const want = JSON.stringify(value, null, 2);
    for (let depth = 0; depth <= 6; depth++) {
      assert.equal(printed(streamedTo(value, depth)), want, `${name}, depth ${depth}`);
    }
  }
});

Deno.test("json out: each list item is made only when it is printed", () => {
  const made: number[] = [];
  const items = new JsonList({
    *[Symbol.iterator]() {
      for (let i = 0; i < 3; i++) {
        made.push(i);
        yield { i };
      }
    },
  });
  const seen: number[] = [];
  writeJson(new JsonObject([["items", items]]), () => void seen.push(made.length));
  // The first chunk is written before any item exists; the last after all of them.
  assert.equal(seen[0], 0);
  assert.equal(seen.at(-1), 3);
  assert.throws(() => printed(undefined), /JSON has no form/);
});

Deno.test("json out: chunks of at least the size, the same text joined", () => {
  const chunks: string[] = [];
  const w = chunkedWriter((t) => void chunks.push(t), 10);
  const pieces = ["abc", "defgh", "ij", "k", "lmnopqrstu", "v", "wx"];
  for (const p of pieces) w.write(p);
  w.end();
  w.end();
  assert.equal(chunks.join(""), pieces.join(""));
  assert.deepEqual(chunks.map((c) => c.length >= 10), [true, true, false]);
});

Deno.test("json out: translate's streamed document prints exactly its whole document", async () => {
  const inputs = [
    "examples/quickstart",
    ...[...Deno.readDirSync("lib/gatewayapi/testdata")]
      .filter((e) => e.name.endsWith(".in.yaml"))
      .map((e) => join("lib/gatewayapi/testdata", e.name))
      .sort(),
  ];
  let resources = 0;
  for (const config of inputs) {
    for (const role of ["edge", "node"] as const) {
      const out = await translateConfig({ config, role });
      for (const status of [false, true]) {
        const whole = outputDocument(out, status);
        const want = JSON.stringify(whole, null, 2);
        assert.equal(printed(streamedDocument(out, status)), want, `${config} ${role} ${status}`);
      }
      resources += out.proxies.reduce((n, p) => n + p.snapshot.typeUrls().length, 0);
    }
  }
  assert.ok(inputs.length > 10 && resources > 100, `${inputs.length} inputs, ${resources} types`);
});
