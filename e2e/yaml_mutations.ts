/**
 * Deterministic hostile variations of a YAML config text for the fuzz e2e: truncations, type
 * swaps, duplicate keys, 10k-deep nesting, 1 MB strings, alias bombs, byte flips, tabs, List
 * junk — each a whole file's text.
 * @module
 */

/** A small deterministic PRNG (so a failing run can be replayed by its index). */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const swaps = ['"x"', "-1", "99999", "1.5", "[]", "{}", "true", "null", "[[1]]", '{"a": {"b": 1}}'];

function aliasBomb(levels: number): string {
  const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < levels; i++) {
    lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(",")}]`);
  }
  return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  " +
    lines.join("\n  ") + "\n";
}

/** The `i`-th mutation of `seed` (i cycles through the kinds). */
export function mutate(seed: string, i: number): { kind: string; text: string } {
  const rnd = prng(i * 7919 + 1);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const lines = seed.split("\n");
  const kinds = [
    "truncate",
    "type-swap",
    "duplicate-key",
    "deep-nesting",
    "big-string",
    "alias-bomb",
    "byte-flips",
    "tabs",
    "list-junk",
    "swap-and-truncate",
  ];
  const kind = kinds[i % kinds.length];
  switch (kind) {
    case "truncate":
      return { kind, text: seed.slice(0, Math.floor(rnd() * seed.length)) };
    case "type-swap":
    case "swap-and-truncate": {
      const out = lines.map((l) => {
        const m = /^(\s*-?\s*[A-Za-z]+:)\s+(.+)$/.exec(l);
        return m && rnd() < 0.3 ? `${m[1]} ${pick(swaps)}` : l;
      }).join("\n");
      return {
        kind,
        text: kind === "type-swap"
          ? out
          : out.slice(0, Math.floor(out.length * (0.3 + rnd() * 0.7))),
      };
    }
    case "duplicate-key": {
      const at = Math.floor(rnd() * lines.length);
      const copy = lines[at];
      return { kind, text: [...lines.slice(0, at + 1), copy, ...lines.slice(at + 1)].join("\n") };
    }
    case "deep-nesting":
      return {
        kind,
        text: rnd() < 0.5
          ? `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${"[".repeat(10000)}${
            "]".repeat(10000)
          }\n`
          : `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${
            "{a: ".repeat(10000)
          }1${"}".repeat(10000)}\n`,
      };
    case "big-string":
      return {
        kind,
        text: seed +
          `\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {x: "${
            "y".repeat(1 << 20)
          }"}\n`,
      };
    case "alias-bomb":
      return { kind, text: seed + "\n---\n" + aliasBomb(9) };
    case "byte-flips": {
      const chars = [...seed];
      for (let k = 0; k < 20; k++) {
        chars[Math.floor(rnd() * chars.length)] = pick([
          ":",
          "-",
          "[",
          "{",
          "&",
          "*",
          "!",
          "|",
          "'",
          '"',
          "%",
          "@",
          "\0",
        ]);
      }
      return { kind, text: chars.join("") };
    }
    case "tabs":
      return { kind, text: seed.replaceAll("  ", "\t") };
    default:
      return {
        kind,
        text:
          `apiVersion: v1\nkind: List\nitems: [1, "two", [3], {kind: X}, {apiVersion: v1, kind: Service}, null]\n`,
      };
  }
}
