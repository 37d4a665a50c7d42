import assert from "node:assert/strict";
import { generateFacts, OUTPUT, render } from "../../../../tools/gen_crds.ts";
import { FACTS } from "./facts.gen.ts";
import { ADMISSION_KINDS as KINDS } from "../../read_kinds.ts";

/** A schema node seen as a plain record (the test walks down known paths). */
// deno-lint-ignore no-explicit-any
const loose = (s: unknown): any => s;

Deno.test("crd facts: regenerating from the vendored YAML gives the checked-in module", async () => {
  const facts = await generateFacts();
  assert.equal(render(facts), await Deno.readTextFile(OUTPUT), "run deno task gen-crds");
  assert.deepEqual(facts, FACTS);
  assert.equal(render(await generateFacts()), render(facts), "generation is deterministic");
});

Deno.test("crd facts: admission uses the generated bounds, patterns, enums and defaults", () => {
  const route = loose(KINDS.HTTPRoute.body);
  assert.equal(route.t, "object");
  const spec = route.props.spec;
  const rules = spec.props.rules;
  const ruleNode = FACTS.nodes[FACTS.kinds.HTTPRoute.versions.v1];
  const specNode = FACTS.nodes[ruleNode.properties!.spec];
  const rulesNode = FACTS.nodes[specNode.properties!.rules];
  // The schema node admission walks is built from the fact node, fact for fact.
  assert.equal(rules.max, rulesNode.maxItems);
  assert.deepEqual(rules.default, rulesNode.default);
  const hostnames = FACTS.nodes[specNode.properties!.hostnames];
  assert.equal(spec.props.hostnames.items.pattern.source, FACTS.nodes[hostnames.items!].pattern);
  assert.deepEqual(KINDS.HTTPRoute.apiVersions, [
    "gateway.networking.k8s.io/v1",
    "gateway.networking.k8s.io/v1beta1",
  ]);
  const listeners = loose(KINDS.Gateway.body).props.spec.props.listeners;
  assert.equal(listeners.listType, "map");
  assert.deepEqual(listeners.keys, ["name"]);
});
