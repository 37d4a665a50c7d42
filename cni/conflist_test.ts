import assert from "node:assert/strict";
import { join } from "node:path";
import { parseConfFile, pluginEntry, primaryFile, withEntry, withoutEntry } from "./conflist.ts";

const dir = new URL("./testdata/conflist/", import.meta.url).pathname;
const entry = pluginEntry({
  socketPath: "/run/aether/cni.sock",
  timeoutSeconds: 30,
  excludeNamespaces: ["kube-system", "aether-system"],
});

/**
 * Golden: each configuration in testdata/conflist/ with the entry inserted, in
 * `<file>.golden` as `# <written file name>` and the text (UPDATE_GOLDEN=1 rewrites).
 */
Deno.test("conflist golden: the entry inserted into each primary CNI's configuration", async () => {
  const inputs = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => !n.endsWith(".golden"))
    .sort();
  assert.ok(inputs.length >= 4);
  for (const name of inputs) {
    const edit = withEntry(name, await Deno.readTextFile(join(dir, name)), entry);
    assert.ok(edit && !("error" in edit), name);
    const got = `# ${edit.name}${
      edit.replaces ? ` (replaces ${edit.replaces})` : ""
    }\n${edit.text}`;
    const golden = join(dir, `${name}.golden`);
    if (Deno.env.get("UPDATE_GOLDEN") === "1") await Deno.writeTextFile(golden, got);
    assert.equal(got, await Deno.readTextFile(golden), `${name}: UPDATE_GOLDEN=1 to regenerate`);
    // Inserting again changes nothing; removing gives the primary's plugins back.
    assert.equal(withEntry(edit.name, edit.text, entry), undefined, `${name}: idempotent`);
    const without = JSON.parse(withoutEntry(edit.text)!);
    assert.ok(without.plugins.every((p: { type: string }) => p.type !== "aether-cni"));
  }
});

Deno.test("conflist: the entry declares the pod-annotations capability and the plugin's keys", () => {
  assert.deepEqual(pluginEntry(), {
    type: "aether-cni",
    socketPath: "/run/aether/cni.sock",
    timeoutSeconds: 30,
    capabilities: { "io.kubernetes.cri.pod-annotations": true },
  });
});

Deno.test("conflist: the first file in lexical order is the runtime's; others are ignored", () => {
  assert.equal(
    primaryFile([
      "99-calico.json",
      "10-b.conflist",
      "10-a.conf",
      "README",
      ".10-x.conf.aether-tmp",
    ]),
    "10-a.conf",
  );
  assert.equal(primaryFile(["Z.conf", "a.conf"]), "Z.conf", "byte order, as Go's sort.Strings");
  assert.equal(primaryFile(["notes.txt"]), undefined);
});

Deno.test("conflist: another chained plugin after ours is left alone; bad files are refused", () => {
  const list = {
    cniVersion: "1.0.0",
    name: "n",
    plugins: [{ type: "bridge" }, entry, { type: "istio-cni" }],
  };
  assert.equal(withEntry("a.conflist", JSON.stringify(list), entry), undefined);
  const edited = withEntry(
    "a.conflist",
    JSON.stringify({ ...list, plugins: [{ type: "bridge" }, entry, entry] }),
    entry,
  );
  assert.ok(edited && !("error" in edited));
  assert.deepEqual(JSON.parse(edited.text).plugins, [{ type: "bridge" }, entry], "one entry");
  for (
    const [text, why] of [
      ["{", /not JSON/],
      ["[]", /not a JSON object/],
      ['{"plugins":[]}', /lists no plugin/],
      [JSON.stringify({ plugins: [entry] }), /lists no plugin/],
      ['{"name":"x"}', /neither/],
    ] as const
  ) {
    const r = withEntry("a.conflist", text, entry);
    assert.ok(r && "error" in r && why.test(r.error), text);
    assert.ok("error" in parseConfFile(text));
  }
  assert.equal(withoutEntry('{"plugins":[{"type":"bridge"}]}'), undefined, "nothing to remove");
});
