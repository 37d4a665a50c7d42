/**
 * The CNI socket server with a real socket and a real CniSource, driven by the plugin as
 * cni/main.ts runs it (forward.ts, in process): ADD answered only once `captured` resolved, the
 * bound, an agent that is down, DEL, concurrency, restarts, and clients that send garbage.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Logger } from "../../lib/log/mod.ts";
import type { SourceRevision } from "../../lib/source/mod.ts";
import { deferred, pluginConf, podEnv, PREV_RESULT } from "../../cni/_test_utils.ts";
import { type PodAttachment, runPlugin } from "../../cni/mod.ts";
import { type CapturedWait, cniCapture } from "./cni_server.ts";

const enc = new TextEncoder();
const quiet = new Logger("test", () => {});

/** A started server in a temp state dir; `gate(pod)` is the `captured` wait of a pod. */
async function agent(root?: string) {
  const dir = root ?? await Deno.makeTempDir({ prefix: "aether-cni-server-" });
  const gates = new Map<string, ReturnType<typeof deferred>>();
  const waits: { pod: PodAttachment; signal: AbortSignal }[] = [];
  const gate = (pod: string) => {
    if (!gates.has(pod)) gates.set(pod, deferred());
    return gates.get(pod)!;
  };
  const captured: CapturedWait = (pod, signal) => {
    waits.push({ pod, signal });
    return gate(`${pod.namespace}/${pod.name}`).promise;
  };
  const socketPath = join(dir, "run", "cni.sock");
  const cni = cniCapture({
    stateDir: join(dir, "state"),
    socketPath,
    captured,
    logger: quiet,
    readTimeoutMs: 300,
  });
  const revisions: SourceRevision[] = [];
  await cni.source.start((r) => revisions.push(r));
  await cni.server.start();
  const conf = (extra: Record<string, unknown> = {}) =>
    enc.encode(JSON.stringify(pluginConf({ socketPath, ...extra })));
  const plugin = (env: Record<string, string>, extra: Record<string, unknown> = {}) =>
    runPlugin({ env, stdin: conf(extra) });
  const names = () => revisions[revisions.length - 1].objects.map((o) => o.metadata.name);
  const stop = async () => {
    await cni.close();
    await cni.source.stop();
  };
  return { dir, cni, gate, waits, socketPath, conf, plugin, names, revisions, stop };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("server: ADD records the pod, then answers prevResult once it is captured", async () => {
  const a = await agent();
  try {
    let answered = false;
    const reply = a.plugin(podEnv("ADD", "web")).then((r) => (answered = true, r));
    while (a.waits.length === 0) await tick();
    assert.deepEqual(a.names(), ["web"], "the record is delivered before the answer");
    assert.equal(a.waits[0].pod.netnsPath, "/run/netns/cni-web");
    assert.deepEqual(a.waits[0].pod.ips, ["10.244.0.7"]);
    await tick();
    assert.equal(answered, false);
    a.gate("shop/web").resolve();
    const r = await reply;
    assert.equal(r.exitCode, 0, r.stdout);
    assert.deepEqual(JSON.parse(r.stdout), PREV_RESULT);
  } finally {
    await a.stop();
    await Deno.remove(a.dir, { recursive: true });
  }
});

Deno.test("server: not captured within the bound → 11; agent down → 11 saying what to do", async () => {
  const a = await agent();
  try {
    const late = await a.plugin(podEnv("ADD", "web"), { timeoutSeconds: 0.2 });
    const e = JSON.parse(late.stdout);
    assert.deepEqual([late.exitCode, e.code], [1, 11]);
    assert.match(e.msg, /did not capture shop\/web within 0\.2 s/);
    assert.equal(a.waits[0].signal.aborted, true);
    await a.stop();
    const down = await a.plugin(podEnv("ADD", "api"));
    const d = JSON.parse(down.stdout);
    assert.deepEqual([down.exitCode, d.code], [1, 11]);
    assert.match(d.msg, /unreachable at .*cni\.sock/);
    assert.match(d.details, /does not start; the runtime retries it\. Check the aether agent/);
  } finally {
    await Deno.remove(a.dir, { recursive: true });
  }
});

Deno.test("server: concurrent ADDs of different pods each wait for their own capture", async () => {
  const a = await agent();
  try {
    const pods = ["p0", "p1", "p2", "p3", "p4"];
    const done = new Set<string>();
    const replies = pods.map((p) =>
      a.plugin(podEnv("ADD", p)).then((r) => {
        done.add(p);
        return r;
      })
    );
    while (a.waits.length < pods.length) await tick();
    assert.deepEqual(a.names(), pods);
    for (const p of [...pods].reverse()) {
      a.gate(`shop/${p}`).resolve();
      const r = await replies[pods.indexOf(p)];
      assert.equal(r.exitCode, 0, r.stdout);
      assert.deepEqual([...done].sort(), pods.filter((q) => q >= p), "only the captured answered");
    }
  } finally {
    await a.stop();
    await Deno.remove(a.dir, { recursive: true });
  }
});

Deno.test("server: DEL twice and without netns; opted-out pods are not recorded", async () => {
  const a = await agent();
  try {
    a.gate("shop/web").resolve();
    assert.equal((await a.plugin(podEnv("ADD", "web"))).exitCode, 0);
    const { CNI_NETNS: _, ...noNetns } = podEnv("DEL", "web");
    for (const env of [podEnv("DEL", "web"), noNetns]) {
      const r = await a.plugin(env);
      assert.deepEqual([r.exitCode, r.stdout], [0, ""]);
      assert.deepEqual(a.names(), []);
    }
    const out = await a.plugin(podEnv("ADD", "quiet"), {
      runtimeConfig: { "io.kubernetes.cri.pod-annotations": { "aether.io/capture": "false" } },
    });
    assert.deepEqual(JSON.parse(out.stdout), PREV_RESULT);
    assert.deepEqual(a.names(), []);
    assert.equal(a.waits.length, 1, "only web was waited for");
  } finally {
    await a.stop();
    await Deno.remove(a.dir, { recursive: true });
  }
});

Deno.test("server: a restarted agent reloads its pods' records (CHECK finds them)", async () => {
  const a = await agent();
  try {
    // The pod's netns exists (a record whose netns is gone is forgotten on start).
    const netns = join(a.dir, "cni-web");
    await Deno.writeTextFile(netns, "");
    a.gate("shop/web").resolve();
    assert.equal((await a.plugin(podEnv("ADD", "web", { CNI_NETNS: netns }))).exitCode, 0);
    await a.stop();
    const b = await agent(a.dir);
    try {
      assert.deepEqual(b.names(), ["web"], "in the first revision, before any ADD");
      b.gate("shop/web").resolve();
      const check = await b.plugin(podEnv("CHECK", "web"));
      assert.deepEqual([check.exitCode, check.stdout], [0, ""]);
      const unknown = JSON.parse((await b.plugin(podEnv("CHECK", "api"))).stdout);
      assert.equal(unknown.code, 100);
    } finally {
      await b.stop();
    }
  } finally {
    await Deno.remove(a.dir, { recursive: true });
  }
});

/** Sends raw bytes, half-closes, reads the reply frame's stdout (or "" if none). */
async function raw(socketPath: string, bytes: Uint8Array, close = true): Promise<string> {
  const conn = await Deno.connect({ transport: "unix", path: socketPath });
  try {
    await conn.write(bytes);
    if (close) await conn.closeWrite();
    const out = await new Response(conn.readable).bytes();
    const n = new DataView(out.buffer, out.byteOffset).getUint32(8);
    return new TextDecoder().decode(out.subarray(12, 12 + n));
  } catch {
    return "";
  }
}

Deno.test("server: garbage, an oversized frame or a stalled client get an error, not a crash", async () => {
  const a = await agent();
  try {
    assert.match(
      await raw(a.socketPath, enc.encode("GET / HTTP/1.1\r\n\r\n")),
      /"code":6.*not an aether/,
    );
    const huge = new Uint8Array(12);
    huge.set(enc.encode("ACN1"));
    new DataView(huge.buffer).setUint32(4, 0);
    new DataView(huge.buffer).setUint32(8, 0xffffffff);
    assert.match(await raw(a.socketPath, huge), /configuration is 4294967295 bytes, over/);
    assert.match(await raw(a.socketPath, enc.encode("ACN1\0\0")), /"code":6.*ended after/);
    // A client that sends half a frame and waits: told off after the read bound.
    assert.match(await raw(a.socketPath, enc.encode("ACN1"), false), /no whole request within/);
    // Still serving.
    a.gate("shop/web").resolve();
    assert.equal((await a.plugin(podEnv("ADD", "web"))).exitCode, 0);
  } finally {
    await a.stop();
    await Deno.remove(a.dir, { recursive: true });
  }
});
