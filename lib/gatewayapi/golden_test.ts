import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  checkGolden,
  goldenCaseNames,
  goldenYaml,
  orphanedOutputs,
  readYamlDocsStrict,
} from "../../testbed/golden.ts";
import { resolveLoadingCel } from "./_test_utils.ts";
import type { KubeObject } from "./types.ts";

const dir = fileURLToPath(new URL("./testdata/", import.meta.url));

/** Every `<case>.in.yaml` in testdata, resolved and compared with `<case>.out.yaml`. */
Deno.test("golden: resolve testdata/<case>.in.yaml → <case>.out.yaml", async (t) => {
  const cases = goldenCaseNames(dir);
  assert.ok(cases.length > 0, "no golden cases");
  for (const name of cases) {
    await t.step(name, async () => {
      const objects = readYamlDocsStrict(join(dir, `${name}.in.yaml`)) as KubeObject[];
      // A case that reaches a rule without a hand predicate loads the CEL library on the way.
      checkGolden(
        join(dir, `${name}.out.yaml`),
        goldenYaml(await resolveLoadingCel(objects)),
        "deno test -A lib/gatewayapi",
      );
    });
  }
});

Deno.test("golden: no output without its input (UPDATE_GOLDEN=1 deletes them)", () => {
  assert.deepEqual(orphanedOutputs(dir), []);
});

Deno.test("resolve without the mesh: the same IR and statuses, an empty MeshIR", async () => {
  let meshServices = 0;
  for (const name of goldenCaseNames(dir)) {
    const objects = readYamlDocsStrict(join(dir, `${name}.in.yaml`)) as KubeObject[];
    const full = await resolveLoadingCel(objects);
    const edge = await resolveLoadingCel(objects, { mesh: false });
    assert.deepEqual(edge.ir, full.ir, name);
    assert.deepEqual(edge.statuses, full.statuses, name);
    assert.deepEqual(edge.problems, full.problems, name);
    assert.deepEqual(edge.mesh, { services: [], clusters: [] }, name);
    meshServices += full.mesh.services.length;
  }
  assert.ok(meshServices > 0, "some golden case has mesh services");
});
