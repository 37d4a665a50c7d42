/**
 * Golden documents: each `testdata/<case>.in.yaml` spec rendered as the full-replace document
 * and, with a `next` spec, the set-sync document to it (or `replace` when elements cannot do it),
 * compared with `<case>.out.yaml`. agent/capture/nft_real_test.ts runs the same cases through
 * real nftables.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { checkGolden, goldenYaml, orphanedOutputs } from "../../testbed/golden.ts";
import { goldenDir, nftGoldenCases } from "./_golden_test_utils.ts";
import { replaceTable, syncSets } from "./mod.ts";

Deno.test("golden: nft testdata/<case>.in.yaml → <case>.out.yaml", async (t) => {
  const cases = nftGoldenCases();
  assert.ok(cases.length > 0, "no golden cases");
  for (const c of cases) {
    await t.step(c.name, () => {
      const out: Record<string, unknown> = { replace: replaceTable(c.spec) };
      if (c.next) out.sync = syncSets(c.spec, c.next) ?? "replace";
      checkGolden(join(goldenDir, `${c.name}.out.yaml`), goldenYaml(out), "deno test -A lib/nft");
    });
  }
});

Deno.test("golden: no nft output without its input (UPDATE_GOLDEN=1 deletes them)", () => {
  assert.deepEqual(orphanedOutputs(goldenDir), []);
});
