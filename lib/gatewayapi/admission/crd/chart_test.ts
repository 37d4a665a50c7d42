import assert from "node:assert/strict";
import { CHART_CRDS, chartCrdDrift } from "../../../../tools/gen_crds.ts";

Deno.test("the chart's crds/ are plain copies of the vendored standard channel", async () => {
  const st = await Deno.lstat(CHART_CRDS);
  assert.ok(st.isDirectory && !st.isSymlink, "crds/ is a folder of files (Helm warns on a link)");
  assert.deepEqual(await chartCrdDrift(), [], "run deno task gen-crds");
});
