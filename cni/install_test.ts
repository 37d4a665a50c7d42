import assert from "node:assert/strict";
import { join } from "node:path";
import {
  installOnce,
  type InstallOutcome,
  sameContent,
  uninstall,
  watchInstall,
} from "./install.ts";

const bridge = {
  cniVersion: "1.0.0",
  name: "pods",
  plugins: [{ type: "bridge", bridge: "cni0" }, { type: "portmap" }],
};

async function node() {
  const root = await Deno.makeTempDir({ prefix: "aether-cni-install-" });
  const binDir = join(root, "bin"), confDir = join(root, "net.d");
  await Deno.mkdir(binDir);
  await Deno.mkdir(confDir);
  const plugin = join(root, "aether-cni-build");
  await Deno.writeTextFile(plugin, "#!/bin/sh\necho v1\n");
  const o = { binDir, confDir, plugin, keys: { excludeNamespaces: ["kube-system", "aether"] } };
  return { root, binDir, confDir, plugin, o };
}

const types = async (path: string) =>
  (JSON.parse(await Deno.readTextFile(path)).plugins as { type: string }[]).map((p) => p.type);

Deno.test("install: binary copied, entry appended to the first conflist, mode kept; twice = once", async () => {
  const n = await node();
  try {
    const first = join(n.confDir, "10-pods.conflist");
    await Deno.writeTextFile(first, JSON.stringify(bridge), { mode: 0o640 });
    await Deno.chmod(first, 0o640);
    await Deno.writeTextFile(join(n.confDir, "20-other.conflist"), JSON.stringify(bridge));
    const out = await installOnce(n.o);
    assert.deepEqual(out, {
      binary: "copied",
      conf: { action: "inserted", file: "10-pods.conflist" },
    });
    assert.deepEqual(await types(first), ["bridge", "portmap", "aether-cni"]);
    assert.equal((await Deno.stat(first)).mode! & 0o777, 0o640, "mode kept");
    assert.deepEqual(await types(join(n.confDir, "20-other.conflist")), ["bridge", "portmap"]);
    const bin = join(n.binDir, "aether-cni");
    assert.equal((await Deno.stat(bin)).mode! & 0o777, 0o755);
    assert.equal(await Deno.readTextFile(bin), await Deno.readTextFile(n.plugin));
    assert.deepEqual(await installOnce(n.o), {
      binary: "unchanged",
      conf: { action: "unchanged", file: "10-pods.conflist" },
    });
    const left = [...Deno.readDirSync(n.confDir), ...Deno.readDirSync(n.binDir)].map((e) => e.name);
    assert.deepEqual(left.sort(), ["10-pods.conflist", "20-other.conflist", "aether-cni"]);
  } finally {
    await Deno.remove(n.root, { recursive: true });
  }
});

Deno.test("install: a new binary replaces the old by rename, never in place", async () => {
  const n = await node();
  try {
    await Deno.writeTextFile(join(n.confDir, "10-pods.conflist"), JSON.stringify(bridge));
    await installOnce(n.o);
    const bin = join(n.binDir, "aether-cni");
    // A process running the old binary keeps its file: hold it open as the kernel would.
    const running = await Deno.open(bin);
    const before = (await Deno.stat(bin)).ino;
    await Deno.writeTextFile(n.plugin, "#!/bin/sh\necho v2\n");
    assert.equal((await installOnce(n.o)).binary, "copied");
    assert.notEqual((await Deno.stat(bin)).ino, before, "a new file, renamed over the old");
    const old = new Uint8Array(64);
    const got = (await running.read(old)) ?? 0;
    running.close();
    assert.match(new TextDecoder().decode(old.subarray(0, got)), /echo v1/);
    assert.match(await Deno.readTextFile(bin), /echo v2/);
  } finally {
    await Deno.remove(n.root, { recursive: true });
  }
});

Deno.test("install: a single-plugin .conf becomes a .conflist; no usable conf: waiting", async () => {
  const n = await node();
  try {
    assert.deepEqual((await installOnce(n.o)).conf, {
      action: "waiting",
      reason: `no network configuration in ${n.confDir}`,
    });
    await Deno.writeTextFile(join(n.confDir, "10-flannel.conf"), "{ broken");
    await Deno.writeTextFile(join(n.confDir, "20-pods.conflist"), JSON.stringify(bridge));
    const waiting = (await installOnce(n.o)).conf;
    assert.equal(waiting.action, "waiting", "the runtime's file is broken: no other is edited");
    assert.match(waiting.reason!, /10-flannel\.conf: not JSON/);
    assert.deepEqual(await types(join(n.confDir, "20-pods.conflist")), ["bridge", "portmap"]);
    await Deno.writeTextFile(
      join(n.confDir, "10-flannel.conf"),
      JSON.stringify({ cniVersion: "1.0.0", name: "cbr0", type: "flannel" }),
    );
    assert.deepEqual((await installOnce(n.o)).conf, {
      action: "inserted",
      file: "10-flannel.conflist",
    });
    const names = [...Deno.readDirSync(n.confDir)].map((e) => e.name).sort();
    assert.deepEqual(names, ["10-flannel.conflist", "20-pods.conflist"]);
    assert.deepEqual(await types(join(n.confDir, "10-flannel.conflist")), [
      "flannel",
      "aether-cni",
    ]);
  } finally {
    await Deno.remove(n.root, { recursive: true });
  }
});

Deno.test("uninstall: every conflist loses the entry, the binary goes", async () => {
  const n = await node();
  try {
    await Deno.writeTextFile(join(n.confDir, "10-pods.conflist"), JSON.stringify(bridge));
    await installOnce(n.o);
    assert.deepEqual(await uninstall(n.o), ["10-pods.conflist"]);
    assert.deepEqual(await types(join(n.confDir, "10-pods.conflist")), ["bridge", "portmap"]);
    assert.deepEqual([...Deno.readDirSync(n.binDir)], []);
    assert.deepEqual(await uninstall(n.o), [], "again: nothing to do");
  } finally {
    await Deno.remove(n.root, { recursive: true });
  }
});

/** A watchInstall under test: its passes, and a wait for one that meets a condition. */
function watched(
  n: Awaited<ReturnType<typeof node>>,
  uninstallOnExit: boolean | (() => Promise<boolean>) = false,
) {
  const passes: (InstallOutcome | Error)[] = [];
  let wake = () => {};
  const stop = new AbortController();
  const done = watchInstall({
    ...n.o,
    signal: stop.signal,
    uninstallOnExit,
    resyncMs: 60_000, // events only: the test proves the watcher
    onPass: (p) => {
      passes.push(p);
      wake();
    },
  });
  const until = async (what: string, ok: () => Promise<boolean>) => {
    const deadline = Date.now() + 20_000;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`never: ${what} (passes: ${passes.length})`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 200); // re-check the files too: a pass may have landed before the wait
      });
    }
  };
  return { passes, stop, done, until };
}

Deno.test("watch: the entry comes back when the primary CNI rewrites its file", async () => {
  const n = await node();
  const first = join(n.confDir, "10-pods.conflist");
  try {
    await Deno.writeTextFile(first, JSON.stringify(bridge));
    const w = watched(n);
    const ours = async () => (await types(first).catch((): string[] => [])).includes("aether-cni");
    await w.until("first install", ours);
    // The primary CNI writes its file anew (temp + rename, as most do).
    await Deno.writeTextFile(`${first}.new`, JSON.stringify({ ...bridge, name: "pods2" }));
    await Deno.rename(`${first}.new`, first);
    await w.until(
      "re-inserted after the rewrite",
      async () => (await ours()) && JSON.parse(await Deno.readTextFile(first)).name === "pods2",
    );
    await Deno.remove(join(n.binDir, "aether-cni"));
    await w.until(
      "binary back",
      () => Deno.stat(join(n.binDir, "aether-cni")).then(() => true, () => false),
    );
    assert.ok(w.passes.every((p) => !(p instanceof Error)), String(w.passes));
    w.stop.abort();
    await w.done;
    assert.ok(await ours(), "a restart or upgrade leaves the plugin installed");
  } finally {
    await Deno.remove(n.root, { recursive: true });
  }
});

Deno.test("watch: with uninstallOnExit, stopping removes entry and binary", async () => {
  const n = await node();
  const first = join(n.confDir, "10-pods.conflist");
  try {
    await Deno.writeTextFile(first, JSON.stringify(bridge));
    const w = watched(n, true);
    await w.until("installed", async () => (await types(first)).includes("aether-cni"));
    w.stop.abort();
    await w.done;
    assert.deepEqual(await types(first), ["bridge", "portmap"]);
    assert.deepEqual([...Deno.readDirSync(n.binDir)], []);
  } finally {
    await Deno.remove(n.root, { recursive: true });
  }
});

Deno.test("watch: uninstallOnExit as a question, asked once on the way out", async () => {
  const n = await node();
  const first = join(n.confDir, "10-pods.conflist");
  try {
    await Deno.writeTextFile(first, JSON.stringify(bridge));
    for (const answer of [false, "throws", true] as const) {
      let asked = 0;
      const w = watched(n, () => {
        asked++;
        return answer === "throws"
          ? Promise.reject(new Error("no answer"))
          : Promise.resolve(answer);
      });
      await w.until("installed", async () => (await types(first)).includes("aether-cni"));
      assert.equal(asked, 0, "not asked while running");
      w.stop.abort();
      await w.done;
      assert.equal(asked, 1);
      const bin = [...Deno.readDirSync(n.binDir)].map((e) => e.name);
      if (answer === true) {
        assert.deepEqual(await types(first), ["bridge", "portmap"]);
        assert.deepEqual(bin, []);
      } else {
        assert.deepEqual(await types(first), ["bridge", "portmap", "aether-cni"], String(answer));
        assert.deepEqual(bin, ["aether-cni"]);
      }
    }
  } finally {
    await Deno.remove(n.root, { recursive: true });
  }
});

Deno.test("install: the binary is compared a chunk at a time, every byte and the size", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-cni-same-" });
  try {
    const a = join(dir, "a"), b = join(dir, "b");
    // Past several 64 KiB chunks, and exactly two of them.
    for (const size of [200_003, 131_072, 5]) {
      const bytes = new Uint8Array(size).map((_, i) => (i * 7 + 3) & 0xff);
      await Deno.writeFile(a, bytes);
      await Deno.writeFile(b, bytes);
      assert.equal(await sameContent(a, b), true, `${size}: equal`);
      for (const at of [0, size >> 1, size - 1]) {
        const other = bytes.slice();
        other[at] ^= 1;
        await Deno.writeFile(b, other);
        assert.equal(await sameContent(a, b), false, `${size}: byte ${at} differs`);
      }
      await Deno.writeFile(b, bytes.subarray(0, size - 1));
      assert.equal(await sameContent(a, b), false, `${size}: shorter`);
    }
    await Deno.remove(b);
    assert.equal(await sameContent(a, b), false, "missing target");
    await Deno.mkdir(b);
    assert.equal(await sameContent(a, b), false, "a directory in its place");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
