import { assert, assertEquals } from "../../testbed/assert.ts";
import { FileSource, readConfig } from "./files/mod.ts";
import { MemorySource } from "../../testbed/memory_source.ts";
import { parseYamlObjects } from "./files/mod.ts";
import { contractService, sourceContract } from "./_contract_test_utils.ts";
import type { SourceRevision } from "./types.ts";

const svc = (name: string) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "default" },
});

Deno.test("yaml: multi-document files, Lists and empty documents", () => {
  const text =
    `apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: default}\n---\n---\n` +
    `apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: b}}\n`;
  const { objects, problems } = parseYamlObjects("f.yaml", text);
  assertEquals(problems, []);
  assertEquals(objects.map((o) => o.metadata.name), ["a", "b"]);
});

Deno.test("yaml: invalid YAML names file, document and line; other documents survive", () => {
  const text = `apiVersion: v1\nkind: Service\nmetadata: {name: ok}\n---\nkind: [unclosed\n`;
  const { objects, problems } = parseYamlObjects("bad.yaml", text);
  assertEquals(objects.map((o) => o.metadata.name), ["ok"]);
  assertEquals(problems.length, 1);
  assertEquals(problems[0].source, "bad.yaml");
  assert(/document 2: invalid YAML at line \d+/.test(problems[0].message), problems[0].message);
});

Deno.test("yaml: missing envelope fields name the field", () => {
  const { problems } = parseYamlObjects(
    "f.yaml",
    `apiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n`,
  );
  assertEquals(problems[0].field, "metadata.name");
  const scalar = parseYamlObjects("f.yaml", `just a string\n`);
  assert(scalar.problems[0].message.includes("expected a mapping"));
});

Deno.test("files: duplicates are reported, first definition wins", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a.yaml`, JSON.stringify(svc("x")));
    await Deno.writeTextFile(
      `${dir}/b.yaml`,
      JSON.stringify({ ...svc("x"), spec: { second: true } }),
    );
    await Deno.writeTextFile(`${dir}/ignored.txt`, "not yaml");
    const snap = await readConfig(dir);
    assertEquals(snap.objects.length, 1);
    assertEquals(snap.objects[0].spec, undefined);
    assert(snap.problems[0].message.includes("duplicate object"));
    assertEquals(snap.origins.get("Service/default/x"), `${dir}/a.yaml`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("contract: MemorySource", async () => {
  await sourceContract(() => {
    const source = new MemorySource([contractService("one")]);
    return Promise.resolve({
      source,
      addTwo: () => Promise.resolve(source.apply(contractService("two"))),
    });
  });
});

Deno.test("contract: FileSource (watching a folder)", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/one.yaml`, JSON.stringify(contractService("one")));
  try {
    await sourceContract(() =>
      Promise.resolve({
        source: new FileSource({ path: dir, debounceMs: 20 }),
        addTwo: () => Deno.writeTextFile(`${dir}/two.yaml`, JSON.stringify(contractService("two"))),
      })
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("files: a file that stops parsing keeps its last good objects and is reported stale", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const memo = new Map();
    await Deno.writeTextFile(`${dir}/a.yaml`, JSON.stringify(svc("a")));
    await Deno.writeTextFile(`${dir}/b.yaml`, JSON.stringify(svc("b")));
    const good = await readConfig(dir, memo);
    assertEquals(good.stale, []);
    // Half-written: invalid YAML.
    await Deno.writeTextFile(`${dir}/b.yaml`, `{"apiVersion": "v1", "kind": "Serv`);
    const bad = await readConfig(dir, memo);
    assertEquals(bad.objects.map((o) => o.metadata.name).sort(), ["a", "b"]);
    assertEquals(bad.stale?.map((s) => s.source), [`${dir}/b.yaml`]);
    assert(/invalid YAML/.test(bad.stale![0].reason), bad.stale![0].reason);
    assert(bad.problems.some((p) => p.source === `${dir}/b.yaml` && /stale/.test(p.message)));
    // Fixed: fresh again.
    await Deno.writeTextFile(`${dir}/b.yaml`, JSON.stringify(svc("b2")));
    const fixed = await readConfig(dir, memo);
    assertEquals(fixed.objects.map((o) => o.metadata.name).sort(), ["a", "b2"]);
    assertEquals(fixed.stale, []);
    // A file that never parsed has nothing to keep: its good documents serve, the rest is a problem.
    await Deno.writeTextFile(`${dir}/c.yaml`, `${JSON.stringify(svc("c"))}\n---\nkind: [x\n`);
    const fresh = await readConfig(dir, memo);
    assert(fresh.objects.some((o) => o.metadata.name === "c"));
    assertEquals(fresh.stale, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileSource: a consumer that throws is logged; reloads go on", async () => {
  const dir = await Deno.makeTempDir();
  const logged: string[] = [];
  const { Logger } = await import("../log/mod.ts");
  const source = new FileSource({
    path: dir,
    debounceMs: 10,
    logger: new Logger("files", (l) => logged.push(l), "error"),
  });
  const seen: number[] = [];
  try {
    await source.start((s) => {
      seen.push(s.objects.length);
      if (seen.length === 2) throw new Error("consumer failed");
    });
    await Deno.writeTextFile(`${dir}/one.yaml`, JSON.stringify(svc("one")));
    const until = async (n: number) => {
      for (let i = 0; i < 3000 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    };
    await until(2);
    await Deno.writeTextFile(`${dir}/two.yaml`, JSON.stringify(svc("two")));
    await until(3);
    assert(seen.length >= 3, `reloads after the failure: ${seen}`);
    assert(logged.some((l) => l.includes("consumer failed")), logged.join("\n"));
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileSource keepDir: a file broken while no agent ran still serves its last good objects", async () => {
  const dir = await Deno.makeTempDir();
  const keepDir = `${dir}.kept`;
  try {
    await Deno.writeTextFile(`${dir}/a.yaml`, JSON.stringify(svc("a")));
    await Deno.writeTextFile(`${dir}/gone.yaml`, JSON.stringify(svc("gone")));
    const first = new FileSource({ path: dir, watch: false, keepDir });
    await first.start(() => {});
    await first.stop();
    // While no agent runs: a.yaml is half-written, gone.yaml deleted.
    await Deno.writeTextFile(`${dir}/a.yaml`, `{"apiVersion": "v1", "kind": "Ser`);
    await Deno.remove(`${dir}/gone.yaml`);
    const seen: SourceRevision[] = [];
    const second = new FileSource({ path: dir, watch: false, keepDir });
    await second.start((s) => seen.push(s));
    await second.stop();
    assertEquals(seen[0].objects.map((o) => o.metadata.name), ["a"]);
    assertEquals(seen[0].stale?.map((s) => s.source), [`${dir}/a.yaml`]);
    // The deleted file's kept copy went with it.
    assertEquals([...Deno.readDirSync(keepDir)].length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(keepDir, { recursive: true }).catch(() => {});
  }
});
