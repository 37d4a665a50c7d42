import { assertEquals } from "../../../testbed/assert.ts";
import { matchRegexProblems, re2Problem } from "./re2.ts";

Deno.test("re2: what RE2 compiles passes", () => {
  for (
    const ok of [
      "/regex/[0-9]+",
      "^a+b$",
      "/(foo|bar)/.*",
      "[(?=]x",
      "\\(?=x\\)",
      "a{2,3}",
      "[\\]+]+",
      "\\\\1",
    ]
  ) {
    assertEquals(re2Problem(ok), undefined, ok);
  }
});

Deno.test("re2: look-around, back-references, atomic groups, possessive quantifiers, invalid syntax", () => {
  const cases: [string, RegExp][] = [
    ["/(?=look)ahead", /look-ahead/],
    ["/(?!x)y", /look-ahead/],
    ["(?<=a)b", /look-behind/],
    ["(?<!a)b", /look-behind/],
    ["(a)\\1", /back-reference \\1/],
    ["(?<n>a)\\k<n>", /named back-reference/],
    ["(?>a)", /atomic/],
    ["a*+", /possessive/],
    ["a{2}+", /possessive/],
    ["(unclosed", /invalid regular expression/],
  ];
  for (const [pattern, want] of cases) {
    const why = re2Problem(pattern) ?? "";
    if (!want.test(why)) throw new Error(`${pattern}: got "${why}"`);
  }
});

Deno.test("re2: problems name the field of every regex in a match", () => {
  const problems = matchRegexProblems({
    path: { type: "RegularExpression", value: "/(?=x)" },
    headers: [{ name: "a", type: "Exact", value: "(?=not a regex)" }, {
      name: "b",
      type: "RegularExpression",
      value: "(a)\\1",
    }],
    queryParams: [{ name: "q", type: "RegularExpression", value: "ok+" }],
  }, "spec.rules[0].matches[1]");
  assertEquals(problems.map((p) => p.split(":")[0]), [
    "spec.rules[0].matches[1].path.value",
    "spec.rules[0].matches[1].headers[1].value",
  ]);
});
