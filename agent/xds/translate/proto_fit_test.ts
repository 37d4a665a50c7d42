import assert from "node:assert/strict";
import { encodeResource, envoyRoot, typeUrlPrefix } from "../proto.ts";
import { enums } from "./enums.ts";
import { translate } from "./mod.ts";
import { protoFitProblems } from "./_proto_fit_test_utils.ts";
import { goldenCases, resourcesByType, staticBootstrap } from "./_test_utils.ts";

Deno.test("every translated resource encodes with encodeResource and fits the schema strictly", () => {
  for (const { name, ir } of goldenCases()) {
    const r = translate(ir);
    const kinds = resourcesByType(r);
    for (const [url, list] of kinds) {
      for (const res of list) {
        assert.equal(res.name, res.resource.name ?? res.resource.cluster_name, `${name}: name`);
        assert.ok(encodeResource(url, res.resource).length > 0, `${name}: ${res.name}`);
        const problems = protoFitProblems(url.slice(typeUrlPrefix.length), res.resource);
        assert.deepEqual(problems, [], `${name}: ${res.name}`);
      }
    }
    const bootstrap = staticBootstrap(r);
    assert.deepEqual(protoFitProblems("envoy.config.bootstrap.v3.Bootstrap", bootstrap), [], name);
  }
});

Deno.test("the strict schema check catches a misspelt field and a bad enum", () => {
  const problems = protoFitProblems("envoy.config.cluster.v3.Cluster", {
    name: "x",
    typ: 3,
    lb_policy: 99,
    typed_extension_protocol_options: {
      k: { "@type": typeUrlPrefix + "google.protobuf.Empty", a: 1 },
    },
  });
  assert.equal(problems.length, 3, problems.join("\n"));
});

Deno.test("enum numbers in enums.ts match the Envoy protos", () => {
  for (const [enumName, values] of Object.entries(enums)) {
    const e = envoyRoot().lookupEnum(enumName);
    for (const [valueName, number] of Object.entries(values)) {
      assert.equal(e.values[valueName], number, `${enumName}.${valueName}`);
    }
  }
});
