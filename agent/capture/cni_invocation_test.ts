/**
 * The plugin as a runtime runs it: libcni's own driver (cnitool v1.1.2, the libcni line
 * containerd 1.6 vendors) executes the conflist the installer wrote — Debian's `bridge` with
 * `host-local`, then the static forwarder — with real CNI_ARGS, CAP_ARGS (the pod-annotations
 * capability) and a real pod netns (`ip netns add`). The bridge lives in a host netns of the
 * test's own, so nothing touches the machine's network. The agent side is the real CNI server and
 * PodNetwork source, its `captured` wait a promise each test resolves.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { buildCniForwarder } from "../../testbed/cni_forwarder.ts";
import { Logger } from "../../lib/log/mod.ts";
import type { SourceRevision } from "../../lib/source/mod.ts";
import { deferred, podArgs } from "../../cni/_test_utils.ts";
import { installOnce, pluginEntry, type PodAttachment } from "../../cni/mod.ts";
import { type CapturedWait, type CniCapture, cniCapture } from "./cni_server.ts";
import type { CniSource } from "./cni_source.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { Engine, MergedSource } from "../../lib/engine/mod.ts";
import { MemorySource } from "../../testbed/memory_source.ts";
import { CaptureSink, NftApplier } from "./mod.ts";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function exec(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const o = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: o.code, stdout: dec.decode(o.stdout), stderr: dec.decode(o.stderr) };
}

/** A node: CNI dirs, a host netns, the installed chain, and (when started) the agent. */
async function node(keys: { timeoutSeconds?: number } = {}) {
  const [ip, cnitool] = [await ensurePeer("ip"), await ensurePeer("cnitool")];
  const debian = (await ensurePeer("cni-plugins")).replace(/\/bridge$/, "");
  const id = crypto.randomUUID().slice(0, 6);
  const root = await Deno.makeTempDir({ prefix: "aether-cni-chain-" });
  const binDir = join(root, "bin"), confDir = join(root, "net.d");
  const socketPath = join(root, "run", "cni.sock");
  const host = `aecni-${id}`;
  const netnses: string[] = [host];
  await Deno.mkdir(confDir, { recursive: true });
  await Deno.writeTextFile(
    join(confDir, "10-pods.conflist"),
    JSON.stringify({
      cniVersion: "1.0.0",
      name: "pods",
      plugins: [{
        type: "bridge",
        bridge: "aecni0",
        isGateway: true,
        ipam: {
          type: "host-local",
          dataDir: join(root, "ipam"),
          ranges: [[{ subnet: "10.251.7.0/24" }]],
          routes: [{ dst: "0.0.0.0/0" }],
        },
      }],
    }),
  );
  const plugin = await buildCniForwarder(join(root, "aether-cni-build"));
  const installed = await installOnce({
    binDir,
    confDir,
    plugin,
    keys: { socketPath, excludeNamespaces: ["kube-system", "aether"], ...keys },
  });
  assert.equal(installed.conf.action, "inserted");
  const made = await exec(ip, ["netns", "add", host]);
  assert.equal(made.code, 0, made.stderr);

  const gates = new Map<string, ReturnType<typeof deferred>>();
  const gate = (pod: string) => {
    if (!gates.has(pod)) gates.set(pod, deferred());
    return gates.get(pod)!;
  };
  const waits: PodAttachment[] = [];
  const revisions: SourceRevision[] = [];
  let agent: CniCapture | undefined;
  /** Starts the agent; by default `captured` waits on the pod's gate, the source stands alone. */
  const start = async (o: {
    captured?: CapturedWait;
    run?: (source: CniSource) => Promise<void>;
  } = {}) => {
    agent = cniCapture({
      stateDir: join(root, "state"),
      socketPath,
      logger: new Logger("test", () => {}),
      captured: o.captured ?? ((pod) => {
        waits.push(pod);
        return gate(`${pod.namespace}/${pod.name}`).promise;
      }),
    });
    await (o.run ?? ((s) => s.start((r) => revisions.push(r))))(agent.source);
    await agent.server.start();
  };
  const stopAgent = async () => {
    await agent?.close();
    await agent?.source.stop();
    agent = undefined;
  };
  /** A pod's netns (`ip netns add`), its path. */
  const netns = async (pod: string) => {
    const name = `${host}-${pod}`;
    const r = await exec(ip, ["netns", "add", name]);
    assert.equal(r.code, 0, r.stderr);
    netnses.push(name);
    return `/run/netns/${name}`;
  };
  /** cnitool `verb` for pod `shop/<pod>` (or `namespace`), inside the host netns. */
  const cni = (
    verb: "add" | "del" | "check",
    pod: string,
    path: string,
    o: { namespace?: string; annotations?: Record<string, string> } = {},
  ) =>
    exec(ip, ["netns", "exec", host, cnitool, verb, "pods", path], {
      NETCONFPATH: confDir,
      CNI_PATH: `${binDir}:${debian}`,
      CNI_ARGS: podArgs(o.namespace ?? "shop", pod),
      CAP_ARGS: JSON.stringify({ "io.kubernetes.cri.pod-annotations": o.annotations ?? {} }),
    });
  const names = () => revisions[revisions.length - 1]?.objects.map((x) => x.metadata.name);
  const podAddress = async (path: string) => {
    const name = path.split("/").pop()!;
    const out = await exec(ip, ["-n", name, "-j", "addr", "show", "eth0"]);
    return JSON.parse(out.stdout)[0]?.addr_info?.find((a: { family: string }) =>
      a.family === "inet"
    )?.local as string | undefined;
  };
  const close = async () => {
    await stopAgent();
    for (const n of netnses.reverse()) await exec(ip, ["netns", "del", n]);
    await Deno.remove(root, { recursive: true });
  };
  return {
    root,
    host,
    binDir,
    socketPath,
    gate,
    waits,
    start,
    stopAgent,
    netns,
    cni,
    names,
    podAddress,
    close,
  };
}

/** Resolves once `ok()` holds (checked on every task turn), or fails after 30 s. */
async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("chain: ADD after bridge + host-local answers their result, only once captured", async () => {
  const n = await node();
  try {
    await n.start();
    const path = await n.netns("web");
    let finished = false;
    const add = n.cni("add", "web", path).then((r) => (finished = true, r));
    await until("captured() is asked", () => n.waits.length === 1);
    // The bridge ran first: the pod has its address, the agent has its record.
    const address = await n.podAddress(path);
    assert.match(address ?? "", /^10\.251\.7\.\d+$/);
    assert.deepEqual(n.waits[0], {
      namespace: "shop",
      name: "web",
      uid: "uid-web",
      containerId: n.waits[0].containerId,
      ifName: "eth0",
      netnsPath: path,
      ips: [address],
    });
    assert.deepEqual(n.names(), ["web"], "the PodNetwork record is delivered");
    assert.equal(finished, false, "ADD does not return while capture is pending");
    n.gate("shop/web").resolve();
    const r = await add;
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.ips[0].address, `${address}/24`, "the bridge's result, passed on");
    assert.ok(result.interfaces.some((i: { sandbox?: string }) => i.sandbox === path));
    // CHECK runs the whole chain: the bridge's checks and ours (recorded, captured).
    const check = await n.cni("check", "web", path);
    assert.equal(check.code, 0, check.stderr);
    // DEL, twice; the record goes with the first.
    for (let i = 0; i < 2; i++) {
      const del = await n.cni("del", "web", path);
      assert.equal(del.code, 0, del.stderr);
      assert.deepEqual(n.names(), []);
    }
  } finally {
    await n.close();
  }
});

Deno.test("chain: agent down → the runtime gets error 11 saying what to do", async () => {
  const n = await node();
  try {
    const path = await n.netns("web");
    const r = await n.cni("add", "web", path);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /plugin type="aether-cni" failed \(add\): the aether node agent is unreachable/,
    );
    assert.match(r.stderr, /the runtime retries it\. Check the aether agent pod on this node/);
    // The code a runtime reads from the plugin's stdout (libcni keeps it in its error):
    const conf = JSON.stringify({
      cniVersion: "1.0.0",
      name: "pods",
      ...pluginEntry({ socketPath: n.socketPath }),
    });
    const direct = await runForwarder(n.binDir, {
      CNI_COMMAND: "ADD",
      CNI_CONTAINERID: "c1",
      CNI_NETNS: path,
      CNI_IFNAME: "eth0",
      CNI_ARGS: podArgs("shop", "web"),
    }, conf);
    assert.equal(JSON.parse(direct.stdout).code, 11);
    // The runtime tears the failed sandbox down: DEL succeeds with the agent still down.
    const del = await n.cni("del", "web", path);
    assert.equal(del.code, 0, del.stderr);
    // Once the agent is back, the retried ADD goes through.
    await n.start();
    n.gate("shop/web").resolve();
    const again = await n.cni("add", "web", path);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await n.cni("del", "web", path)).code, 0);
  } finally {
    await n.close();
  }
});

async function runForwarder(
  binDir: string,
  env: Record<string, string>,
  stdin: string,
): Promise<Ran> {
  const child = new Deno.Command(join(binDir, "aether-cni"), {
    env,
    clearEnv: true,
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

Deno.test("chain: not captured within timeoutSeconds → 11; a silent agent → 11 from the forwarder", async () => {
  const n = await node({ timeoutSeconds: 0.3 });
  try {
    await n.start();
    const path = await n.netns("web");
    const slow = await n.cni("add", "web", path);
    assert.notEqual(slow.code, 0);
    assert.match(slow.stderr, /aether did not capture shop\/web within 0\.3 s/);
    assert.equal((await n.cni("del", "web", path)).code, 0);
    // An agent that accepts and never answers: the forwarder's own bound (0.3 + 5 s).
    await n.stopAgent();
    const mute = Deno.listen({ transport: "unix", path: n.socketPath });
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      try {
        for await (const c of mute) held.push(c);
      } catch { /* closed */ }
    })();
    try {
      const silent = await n.cni("add", "web", path);
      assert.notEqual(silent.code, 0);
      assert.match(silent.stderr, /did not answer within 5\.3 s/);
    } finally {
      mute.close();
      for (const c of held) c.close();
      await accepting;
    }
    assert.equal((await n.cni("del", "web", path)).code, 0);
  } finally {
    await n.close();
  }
});

Deno.test("chain: opted-out and kube-system pods pass without the agent; DEL without netns", async () => {
  const n = await node();
  try {
    // No agent at all: skipped pods never depend on it.
    const quiet = await n.netns("quiet");
    const out = await n.cni("add", "quiet", quiet, {
      annotations: { "aether.io/capture": "false" },
    });
    assert.equal(out.code, 0, out.stderr);
    assert.match(JSON.parse(out.stdout).ips[0].address, /^10\.251\.7\./);
    const sys = await n.netns("dns");
    const dns = await n.cni("add", "dns", sys, { namespace: "kube-system" });
    assert.equal(dns.code, 0, dns.stderr);
    // The netns is gone before the DEL (a pod whose sandbox died): the chain still succeeds.
    await exec(await ensurePeer("ip"), ["netns", "del", sys.split("/").pop()!]);
    assert.equal((await n.cni("del", "dns", sys, { namespace: "kube-system" })).code, 0);
    // A DEL with no CNI_NETNS at all, straight to the forwarder, agent up.
    await n.start();
    const conf = JSON.stringify({
      cniVersion: "1.0.0",
      name: "pods",
      ...pluginEntry({ socketPath: n.socketPath }),
    });
    const del = await runForwarder(n.binDir, {
      CNI_COMMAND: "DEL",
      CNI_CONTAINERID: "c9",
      CNI_IFNAME: "eth0",
      CNI_ARGS: podArgs("shop", "gone"),
    }, conf);
    assert.deepEqual([del.code, del.stdout], [0, ""]);
    assert.equal((await n.cni("del", "quiet", quiet)).code, 0);
  } finally {
    await n.close();
  }
});

Deno.test("chain: concurrent ADDs; a restarted agent reloads its pods from the state dir", async () => {
  const n = await node();
  try {
    await n.start();
    const pods = ["a", "b", "c"];
    const paths = await Promise.all(pods.map((p) => n.netns(p)));
    const done = new Set<string>();
    const adds = pods.map((p, i) => n.cni("add", p, paths[i]).then((r) => (done.add(p), r)));
    await until("all three wait for capture", () => n.waits.length === 3);
    assert.deepEqual(n.names(), pods);
    for (const p of ["b", "c", "a"]) {
      n.gate(`shop/${p}`).resolve();
      const r = await adds[pods.indexOf(p)];
      assert.equal(r.code, 0, r.stderr);
      assert.ok(done.has(p));
    }
    const addresses = new Set(await Promise.all(paths.map((p) => n.podAddress(p))));
    assert.equal(addresses.size, 3, "three pods, three addresses");
    // The agent restarts: its first revision has the three pods, and CHECK finds them.
    await n.stopAgent();
    await n.start();
    assert.deepEqual(n.names(), pods);
    const check = await n.cni("check", "b", paths[1]);
    assert.equal(check.code, 0, check.stderr);
    for (const [i, p] of pods.entries()) assert.equal((await n.cni("del", p, paths[i])).code, 0);
    assert.deepEqual(n.names(), []);
  } finally {
    await n.close();
  }
});

Deno.test("chain + capture sink: the ADD returns once the pod's nft table is in its netns", async () => {
  const nft = await ensurePeer("nft");
  const ip = await ensurePeer("ip");
  const n = await node();
  const quiet = new Logger("test", () => {}, "error");
  const metrics = new Registry();
  const sink = new CaptureSink({
    nodeName: "n1",
    applier: new NftApplier(),
    logger: quiet,
    metrics,
    every: () => () => {},
  });
  const engine = new Engine({
    logger: quiet,
    metrics,
    resolve: { meshDomain: "aether.internal" },
    sinks: [sink],
  });
  const api = new MemorySource([
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "echo", namespace: "shop" },
      spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 80, protocol: "TCP" }] },
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      // As the API server has it while the sandbox is made: no IP yet, no netns annotation.
      metadata: { name: "web", namespace: "shop", uid: "uid-web" },
      spec: { nodeName: "n1" },
      status: { phase: "Pending" },
    },
  ]);
  let merged: MergedSource | undefined;
  try {
    await n.start({
      // What the node agent wires: wait for the capture sink to have the pod's table in place.
      captured: (pod, signal) => sink.whenCaptured(pod.netnsPath, signal).then(() => {}),
      run: async (cni) => {
        merged = new MergedSource([{ origin: "kube", source: api }, {
          origin: "cni",
          source: cni,
        }]);
        await merged.start((r) => void engine.apply(r));
      },
    });
    const path = await n.netns("web");
    const table = () =>
      exec(ip, [
        "netns",
        "exec",
        path.split("/").pop()!,
        nft,
        "-j",
        "list",
        "table",
        "inet",
        "aether",
      ]);
    assert.notEqual((await table()).code, 0, "no table before the ADD");
    const add = await n.cni("add", "web", path);
    assert.equal(add.code, 0, add.stderr);
    const listed = await table();
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /10\.96\.0\.10/, "the Service VIP is in the pod's capture set");
    assert.equal(sink.pod(path)?.state, "captured");
    assert.equal((await n.cni("del", "web", path)).code, 0);
  } finally {
    await n.stopAgent();
    await merged?.stop();
    sink.close();
    await n.close();
  }
});
