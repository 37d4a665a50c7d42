import assert from "node:assert/strict";
import { parseAllDocuments, stringify } from "yaml";
import { resolve } from "./resolve.ts";
import type { KubeObject } from "./types.ts";

const dir = new URL("./testdata/", import.meta.url);
const update = Deno.env.get("UPDATE_GOLDEN") === "1";

/** Every `<case>.in.yaml` in testdata, resolved and compared with `<case>.out.yaml`. */
Deno.test("golden: resolve testdata/<case>.in.yaml → <case>.out.yaml", async (t) => {
  const cases = [...Deno.readDirSync(dir)]
    .map((e) => e.name)
    .filter((n) => n.endsWith(".in.yaml"))
    .sort();
  assert.ok(cases.length > 0, "no golden cases");
  for (const file of cases) {
    const name = file.slice(0, -".in.yaml".length);
    await t.step(name, () => {
      const docs = parseAllDocuments(Deno.readTextFileSync(new URL(file, dir)));
      const objects = docs.map((d) => d.toJS()).filter((o) => o !== null) as KubeObject[];
      const result = resolve(objects);
      const text = stringify(result, { aliasDuplicateObjects: false, lineWidth: 0 });
      const out = new URL(`${name}.out.yaml`, dir);
      if (update) Deno.writeTextFileSync(out, text);
      let want = "";
      try {
        want = Deno.readTextFileSync(out);
      } catch {
        assert.fail(`${name}.out.yaml is missing: run UPDATE_GOLDEN=1 deno test -A lib/gatewayapi`);
      }
      assert.equal(text, want, `${name}: output differs from ${name}.out.yaml`);
    });
  }
});
