/**
 * cni/main.ts as a process: the plugin (stdin, stdout, exit code as a runtime sees them) and the
 * `install --once` / `uninstall` subcommands, and `install --uninstall-when-gone` with no API
 * server to ask (the plugin stays).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pluginConf, podEnv, PREV_RESULT } from "./_test_utils.ts";

const main = new URL("./main.ts", import.meta.url).pathname;

async function run(args: string[], env: Record<string, string>, stdin = "") {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", main, ...args],
    env: { ...env, NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(stdin));
  await w.close();
  const o = await child.output();
  const dec = new TextDecoder();
  return { code: o.code, stdout: dec.decode(o.stdout), stderr: dec.decode(o.stderr) };
}

Deno.test("cni/main.ts as the plugin: VERSION, a skipped pod, the agent unreachable", async () => {
  const v = await run([], { CNI_COMMAND: "VERSION" }, '{"cniVersion":"1.0.0"}');
  assert.equal(v.code, 0, v.stderr);
  assert.equal(JSON.parse(v.stdout).cniVersion, "1.0.0");
  const conf = JSON.stringify(pluginConf({ socketPath: "/nonexistent/aether.sock" }));
  const skipped = await run([], { ...podEnv("ADD", "x"), CNI_ARGS: "" }, conf);
  assert.equal(skipped.code, 0, skipped.stderr);
  assert.deepEqual(JSON.parse(skipped.stdout), PREV_RESULT);
  const down = await run([], podEnv("ADD", "x"), conf);
  assert.equal(down.code, 1);
  assert.equal(JSON.parse(down.stdout).code, 11);
});

Deno.test("cni/main.ts install --once, then uninstall", async () => {
  const root = await Deno.makeTempDir({ prefix: "aether-cni-main-" });
  try {
    const binDir = join(root, "bin"), confDir = join(root, "net.d");
    await Deno.mkdir(confDir, { recursive: true });
    const list = join(confDir, "10-pods.conflist");
    await Deno.writeTextFile(list, JSON.stringify({ name: "p", plugins: [{ type: "bridge" }] }));
    const plugin = join(root, "plugin");
    await Deno.writeTextFile(plugin, "binary");
    const dirs = ["--cni-bin-dir", binDir, "--cni-conf-dir", confDir];
    const inst = await run(["install", "--once", ...dirs, "--plugin", plugin], {
      POD_NAMESPACE: "aether",
    });
    assert.equal(inst.code, 0, inst.stderr);
    const entry = JSON.parse(await Deno.readTextFile(list)).plugins[1];
    assert.deepEqual(entry.excludeNamespaces, ["kube-system", "aether"], "$POD_NAMESPACE too");
    assert.equal(await Deno.readTextFile(join(binDir, "aether-cni")), "binary");
    const un = await run(["uninstall", ...dirs], {});
    assert.equal(un.code, 0, un.stderr);
    assert.equal(JSON.parse(await Deno.readTextFile(list)).plugins.length, 1);
    const bad = await run(["install", "--once", ...dirs, "--timeout-seconds", "500"], {});
    assert.equal(bad.code, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("cni/main.ts install --uninstall-when-gone: no API server to ask keeps the plugin", async () => {
  const root = await Deno.makeTempDir({ prefix: "aether-cni-main-" });
  try {
    const binDir = join(root, "bin"), confDir = join(root, "net.d");
    await Deno.mkdir(confDir, { recursive: true });
    const list = join(confDir, "10-pods.conflist");
    await Deno.writeTextFile(list, JSON.stringify({ name: "p", plugins: [{ type: "bridge" }] }));
    const plugin = join(root, "plugin");
    await Deno.writeTextFile(plugin, "binary");
    const dirs = ["--cni-bin-dir", binDir, "--cni-conf-dir", confDir, "--plugin", plugin];
    const flag = "--uninstall-when-gone";
    for (const bad of [[flag, "aether-agent"], [flag, "a/b", "--uninstall-on-exit"]]) {
      assert.equal((await run(["install", "--once", ...dirs, ...bad], {})).code, 2, bad.join(" "));
    }
    // A closed port: the check gets no answer (nor a token, outside a pod).
    const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = String(closed.addr.port);
    closed.close();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", main, "install", ...dirs, flag, "aether-system/aether-agent"],
      env: { NO_COLOR: "1", KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: port },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const installed = async () =>
      (await Deno.readTextFile(list)).includes("aether-cni") &&
      await Deno.stat(join(binDir, "aether-cni")).then(() => true, () => false);
    for (let i = 0; !(await installed()); i++) {
      assert.ok(i < 600, "installed within a minute");
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGTERM");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.ok(await installed(), "left installed");
    assert.match(stderr, /cannot tell whether aether is being uninstalled/);
    assert.match(stderr, /cni left installed/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
