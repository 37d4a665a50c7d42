/**
 * The static forwarder (cni/forwarder.c, built here with gcc) against its TypeScript twin
 * (forward.ts, the reference): the same invocations, with no agent listening, give the same exit
 * code, the same stdout (JSON compared as values) and the same error codes — which is what holds
 * the skip rule, VERSION and the "agent unreachable" answers of the two to each other. Then bad
 * input: malformed and mutated JSON, deep nesting, huge stdin, never a crash.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildCniForwarder, FORWARDER_CFLAGS } from "../testbed/cni_forwarder.ts";
import { runPlugin } from "./forward.ts";
import type { Reply } from "./spec.ts";
import { pluginConf, podEnv, PREV_RESULT } from "./_test_utils.ts";

const enc = new TextEncoder();

async function runC(bin: string, env: Record<string, string>, stdin: Uint8Array): Promise<Reply> {
  const child = new Deno.Command(bin, {
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(stdin).catch(() => {}); // a huge stdin is not read whole
  await w.close().catch(() => {});
  const o = await child.output();
  assert.equal(o.signal, null, "the forwarder is never killed by a signal");
  const dec = new TextDecoder();
  return { exitCode: o.code, stdout: dec.decode(o.stdout), stderr: dec.decode(o.stderr) };
}

/** The comparable part of a reply: exit code, stdout as JSON (an OS error text cut off). */
function shape(r: Reply) {
  if (r.stdout === "") return { exit: r.exitCode, out: "", stderr: r.stderr !== "" };
  const out = JSON.parse(r.stdout);
  if (typeof out.msg === "string") out.msg = out.msg.replace(/(unreachable at \S+): .*/, "$1");
  return { exit: r.exitCode, out, stderr: r.stderr !== "" };
}

interface Case {
  what: string;
  env: Record<string, string>;
  stdin: string | Uint8Array;
}

function cases(sock: string): Case[] {
  const conf = (extra: Record<string, unknown> = {}) =>
    JSON.stringify(pluginConf({ socketPath: sock, ...extra }));
  const annotated = (value: unknown) =>
    conf({
      runtimeConfig: { "io.kubernetes.cri.pod-annotations": { "aether.io/capture": value } },
    });
  const ks = { ...podEnv("ADD", "dns"), CNI_ARGS: "K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=d" };
  const nest = (n: number) =>
    `{"socketPath":"${sock}","prevResult":{},"x":${"[".repeat(n)}${"]".repeat(n)}}`;
  const out: Case[] = [
    { what: "VERSION, nothing on stdin", env: { CNI_COMMAND: "VERSION" }, stdin: "" },
    { what: "VERSION 0.4.0", env: { CNI_COMMAND: "VERSION" }, stdin: '{"cniVersion":"0.4.0"}' },
    { what: "VERSION unknown", env: { CNI_COMMAND: "VERSION" }, stdin: '{"cniVersion":"7"}' },
    { what: "no command", env: {}, stdin: conf() },
    { what: "not a pod", env: { ...podEnv("ADD", "x"), CNI_ARGS: "" }, stdin: conf() },
    {
      what: "no name",
      env: { ...podEnv("ADD", "x"), CNI_ARGS: "K8S_POD_NAMESPACE=a" },
      stdin: conf(),
    },
    {
      what: "empty name, last wins",
      env: { ...podEnv("ADD", "x"), CNI_ARGS: "K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;K8S_POD_NAME=" },
      stdin: conf(),
    },
    { what: "kube-system", env: ks, stdin: conf() },
    { what: "kube-system, CHECK", env: { ...ks, CNI_COMMAND: "CHECK" }, stdin: conf() },
    { what: "kube-system, DEL goes on", env: { ...ks, CNI_COMMAND: "DEL" }, stdin: conf() },
    { what: "listed", env: podEnv("ADD", "x"), stdin: conf({ excludeNamespaces: ["shop"] }) },
    {
      what: "listed among non-strings",
      env: podEnv("ADD", "x"),
      stdin: conf({ excludeNamespaces: [1, null, { shop: 1 }, "shop"] }),
    },
    { what: "list replaces default", env: ks, stdin: conf({ excludeNamespaces: ["aether"] }) },
    { what: "list not a list", env: ks, stdin: conf({ excludeNamespaces: "aether" }) },
    { what: "opted out", env: podEnv("ADD", "x"), stdin: annotated("false") },
    { what: "opted in", env: podEnv("ADD", "x"), stdin: annotated("true") },
    { what: "boolean false", env: podEnv("ADD", "x"), stdin: annotated(false) },
    {
      what: "escaped key and value",
      env: podEnv("ADD", "x"),
      stdin: `{"socketPath":"${sock}","prevResult":{"ips":[]},"runtimeConfig":` +
        `{"io.kubernetes.cri.pod-annotations":{"aether.io\\/capture":"f\\u0061lse"}}}`,
    },
    {
      what: "duplicate key, the last wins",
      env: podEnv("ADD", "x"),
      stdin: `{"socketPath":"${sock}","prevResult":{},"runtimeConfig":{"io.kubernetes.cri.` +
        `pod-annotations":{"aether.io/capture":"false","aether.io/capture":"no"}}}`,
    },
    { what: "captured pod, no agent", env: podEnv("ADD", "x"), stdin: conf() },
    { what: "CHECK, no agent", env: podEnv("CHECK", "x"), stdin: conf() },
    { what: "DEL, no agent", env: podEnv("DEL", "x"), stdin: conf() },
    { what: "STATUS, no agent", env: { CNI_COMMAND: "STATUS" }, stdin: conf() },
    { what: "GC, no agent", env: { CNI_COMMAND: "GC" }, stdin: conf() },
    { what: "skipped, no prevResult", env: ks, stdin: conf({ prevResult: undefined }) },
    { what: "skipped, prevResult a list", env: ks, stdin: conf({ prevResult: [PREV_RESULT] }) },
    { what: "timeout in conf", env: podEnv("ADD", "x"), stdin: conf({ timeoutSeconds: 2.5 }) },
    { what: "timeout too long", env: podEnv("ADD", "x"), stdin: conf({ timeoutSeconds: 1e400 }) },
    { what: "version in errors", env: podEnv("ADD", "x"), stdin: conf({ cniVersion: 'a"b\n' }) },
    { what: "64 levels", env: ks, stdin: nest(62) },
    { what: "65 levels", env: ks, stdin: nest(63) },
    { what: "BOM", env: ks, stdin: "\ufeff" + conf() },
    { what: "huge", env: ks, stdin: conf({ pad: "x".repeat(1 << 20) }) },
  ];
  for (
    const bad of [
      "{",
      "{}x",
      '{"a":01}',
      '{"a":1.}',
      '{"a":tru}',
      '{"a":"\u0001"}',
      "[]",
      "",
      "nul",
    ]
  ) {
    out.push({ what: `malformed ${JSON.stringify(bad)}`, env: ks, stdin: bad });
  }
  return out;
}

Deno.test("the static forwarder answers as forward.ts does, agent absent", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-cni-fwd-" });
  try {
    const bin = await buildCniForwarder(join(dir, "aether-cni"));
    const sock = join(dir, "no-agent.sock");
    for (const c of cases(sock)) {
      const stdin = typeof c.stdin === "string" ? enc.encode(c.stdin) : c.stdin;
      const ts = await runPlugin({ env: c.env, stdin });
      const cc = await runC(bin, c.env, stdin);
      assert.deepEqual(shape(cc), shape(ts), c.what);
    }
    // What the answers are, spelled out for a few.
    const ks = { ...podEnv("ADD", "d"), CNI_ARGS: "K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=d" };
    const conf = enc.encode(JSON.stringify(pluginConf({ socketPath: sock })));
    assert.deepEqual(JSON.parse((await runC(bin, ks, conf)).stdout), PREV_RESULT);
    const down = await runC(bin, podEnv("ADD", "x"), conf);
    const e = JSON.parse(down.stdout);
    assert.deepEqual([down.exitCode, e.code, e.cniVersion], [1, 11, "1.0.0"]);
    assert.match(e.msg, /unreachable at .*no-agent\.sock: No such file or directory/);
    assert.match(e.details, /runtime retries/);
    const del = await runC(bin, podEnv("DEL", "x"), conf);
    assert.deepEqual([del.exitCode, del.stdout], [0, ""]);
    assert.match(del.stderr, /DEL not forwarded/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the static forwarder survives mutated input (no signal, one JSON answer)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-cni-fuzz-" });
  try {
    const bin = await buildCniForwarder(join(dir, "aether-cni"));
    const base = JSON.stringify(
      pluginConf({
        socketPath: join(dir, "none.sock"),
        excludeNamespaces: ["kube-system"],
        runtimeConfig: { "io.kubernetes.cri.pod-annotations": { "aether.io/capture": "false" } },
      }),
    );
    // A fixed-seed LCG: the same mutations every run.
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const alphabet = '{}[]",:\\u0 \n-1eE.tfn' + "\u00ff";
    for (let i = 0; i < 150; i++) {
      const chars = [...base];
      for (let k = 0, n = 1 + next(6); k < n && chars.length > 0; k++) {
        const at = next(chars.length);
        const op = next(3);
        if (op === 0) chars.splice(at, 1);
        else if (op === 1) chars.splice(at, 0, alphabet[next(alphabet.length)]);
        else chars.length = at; // truncated
      }
      const stdin = enc.encode(chars.join(""));
      const r = await runC(bin, podEnv("ADD", "x"), stdin);
      assert.ok(r.exitCode === 0 || r.exitCode === 1, `exit ${r.exitCode}`);
      assert.doesNotThrow(() => JSON.parse(r.stdout), r.stdout);
      assert.deepEqual(shape(r), shape(await runPlugin({ env: podEnv("ADD", "x"), stdin })));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the Dockerfile builds the forwarder with the same gcc flags", async () => {
  const dockerfile = await Deno.readTextFile(new URL("../Dockerfile", import.meta.url));
  assert.ok(
    dockerfile.includes(`gcc ${FORWARDER_CFLAGS.join(" ")} -o`),
    `the Dockerfile's cni stage runs gcc ${FORWARDER_CFLAGS.join(" ")}`,
  );
});
