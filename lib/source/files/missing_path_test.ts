import assert from "node:assert/strict";
import { join } from "node:path";
import { FileSource } from "./mod.ts";

Deno.test("FileSource: a missing path is refused by name, with what to do", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-missing-config-" });
  const path = join(dir, "no-such-folder");
  const source = new FileSource({ path });
  let delivered = 0;
  try {
    await assert.rejects(
      () => source.start(() => delivered++),
      (e: Error) => {
        assert.ok(e instanceof Deno.errors.NotFound, `a NotFound, got ${e.name}`);
        assert.match(e.message, new RegExp(`config path ${path} does not exist`));
        assert.match(e.message, /--config/);
        assert.doesNotMatch(e.message, /No path was found/);
        return true;
      },
    );
    assert.equal(delivered, 0, "no revision from a path that is not there");
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileSource: a path that exists still starts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-missing-config-" });
  const revisions: number[] = [];
  const source = new FileSource({ path: dir, watch: false });
  try {
    await source.start((r) => revisions.push(r.revision));
    assert.deepEqual(revisions, [1]);
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
