import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../../../../testbed/peers/mod.ts";
import { BUNDLE_VERSION, crdDir } from "../../../../tools/gen_crds.ts";

/** The files of a folder, by name. */
function filesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of Deno.readDirSync(dir)) {
    if (e.isFile && e.name.endsWith(".yaml")) {
      out.set(e.name, Deno.readTextFileSync(join(dir, e.name)));
    }
  }
  return out;
}

Deno.test("vendored CRDs: byte for byte the sigs.k8s.io/gateway-api module's config/crd files", async () => {
  // The peer copies config/crd/{standard,experimental} out of the module zip the Go toolchain
  // downloaded and verified against the checksum database.
  const upstream = await ensurePeer("gateway-api-crds");
  assert.ok(upstream.includes(BUNDLE_VERSION), `peer ${upstream} is not ${BUNDLE_VERSION}`);
  for (const channel of ["standard", "experimental"]) {
    const ours = filesOf(crdDir(channel));
    const theirs = filesOf(join(upstream, channel));
    assert.deepEqual([...ours.keys()].sort(), [...theirs.keys()].sort(), channel);
    for (const [name, text] of ours) {
      assert.ok(text === theirs.get(name), `${channel}/${name} differs`);
    }
  }
});
