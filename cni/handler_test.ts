import assert from "node:assert/strict";
import { handleCni } from "./handler.ts";
import { lenientPodArgs, strictPodArgs, SUPPORTED_VERSIONS } from "./spec.ts";
import { FakeAttachments, pluginConf, podEnv, PREV_RESULT } from "./_test_utils.ts";

const call = (store: FakeAttachments, env: Record<string, string>, conf: unknown = pluginConf()) =>
  handleCni({ env, stdin: typeof conf === "string" ? conf : JSON.stringify(conf) }, store);

const errorOf = (r: { exitCode: number; stdout: string }) => {
  assert.equal(r.exitCode, 1, r.stdout);
  return JSON.parse(r.stdout) as {
    cniVersion: string;
    code: number;
    msg: string;
    details?: string;
  };
};

/** Resolves after the tasks queued now have run (not a wait for time). */
const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("ADD records the pod and answers prevResult only once it is captured", async () => {
  const store = new FakeAttachments();
  let answered = false;
  const reply = call(store, podEnv("ADD", "web")).then((r) => {
    answered = true;
    return r;
  });
  while (store.waits.length === 0) await tick();
  assert.deepEqual(store.records.get("shop/web"), {
    namespace: "shop",
    name: "web",
    uid: "uid-web",
    containerId: "sandbox-web",
    ifName: "eth0",
    netnsPath: "/run/netns/cni-web",
    ips: ["10.244.0.7"],
  });
  await tick();
  assert.equal(answered, false, "no answer while capture is pending");
  store.gate("shop/web").resolve();
  const r = await reply;
  assert.equal(r.exitCode, 0);
  assert.deepEqual(JSON.parse(r.stdout), PREV_RESULT, "prevResult unchanged");
  assert.equal(store.waits[0].signal.aborted, true, "the wait is released after the answer");
});

Deno.test("ADD past the bound, or a failed capture: error 11 saying what to do", async () => {
  const store = new FakeAttachments();
  const late = errorOf(
    await call(store, podEnv("ADD", "web"), pluginConf({ timeoutSeconds: 0.05 })),
  );
  assert.equal(late.code, 11);
  assert.match(late.msg, /did not capture shop\/web within 0\.05 s/);
  assert.match(late.details!, /runtime retries/);
  assert.equal(store.waits[0].signal.aborted, true, "the capture wait is told to stop");
  store.gate("shop/api").reject(new Error("netns gone"));
  const failed = errorOf(await call(store, podEnv("ADD", "api")));
  assert.equal(failed.code, 11);
  assert.match(failed.msg, /could not capture shop\/api: netns gone/);
});

Deno.test("a wait that rejects once told to stop (as the capture sink's does) is no loose end", async () => {
  const store = new FakeAttachments();
  let aborted = false;
  store.captured = (_pod, signal) =>
    new Promise((_, reject) =>
      signal.addEventListener("abort", () => {
        aborted = true;
        reject(new Error("aborted: not captured yet"));
      })
    );
  const r = errorOf(await call(store, podEnv("ADD", "web"), pluginConf({ timeoutSeconds: 0.05 })));
  assert.equal(r.code, 11);
  assert.equal(aborted, true);
  await tick(); // an unhandled rejection would fail the test here
});

Deno.test("skipped: not a pod, excluded namespaces, opted-out pods (prevResult, no capture)", async () => {
  const cases: [string, Record<string, string>, Record<string, unknown>][] = [
    ["not Kubernetes", { ...podEnv("ADD", "x"), CNI_ARGS: "" }, pluginConf()],
    ["kube-system by default", {
      ...podEnv("ADD", "x"),
      CNI_ARGS: "K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=dns",
    }, pluginConf()],
    ["listed namespace", podEnv("ADD", "x"), pluginConf({ excludeNamespaces: ["shop"] })],
    [
      "opted out",
      podEnv("ADD", "x"),
      pluginConf({
        runtimeConfig: { "io.kubernetes.cri.pod-annotations": { "aether.io/capture": "false" } },
      }),
    ],
  ];
  for (const [what, env, conf] of cases) {
    const store = new FakeAttachments();
    const r = await call(store, env, conf);
    assert.equal(r.exitCode, 0, what);
    assert.deepEqual(JSON.parse(r.stdout), PREV_RESULT, what);
    assert.equal(store.records.size + store.waits.length, 0, what);
    const check = await call(store, { ...env, CNI_COMMAND: "CHECK" }, conf);
    assert.deepEqual([check.exitCode, check.stdout], [0, ""], what);
  }
  // A listed namespace list replaces the default: kube-system is then captured.
  const store = new FakeAttachments();
  store.gate("kube-system/dns").resolve();
  const env = {
    ...podEnv("ADD", "dns"),
    CNI_ARGS: "K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=dns",
  };
  assert.equal((await call(store, env, pluginConf({ excludeNamespaces: ["aether"] }))).exitCode, 0);
  assert.equal(store.waits.length, 1);
  // Any other annotation value is captured.
  const other = new FakeAttachments();
  other.gate("shop/x").resolve();
  await call(
    other,
    podEnv("ADD", "x"),
    pluginConf({
      runtimeConfig: { "io.kubernetes.cri.pod-annotations": { "aether.io/capture": "true" } },
    }),
  );
  assert.equal(other.waits.length, 1);
});

Deno.test("DEL forgets the sandbox's record: repeated, without netns, another sandbox kept", async () => {
  const store = new FakeAttachments();
  store.gate("shop/web").resolve();
  await call(store, podEnv("ADD", "web"));
  const other = await call(store, { ...podEnv("DEL", "web"), CNI_CONTAINERID: "sandbox-older" });
  assert.deepEqual([other.exitCode, other.stdout], [0, ""]);
  assert.equal(store.records.size, 1, "another sandbox's DEL leaves the record");
  const { CNI_NETNS: _, ...noNetns } = podEnv("DEL", "web");
  for (let i = 0; i < 2; i++) {
    const r = await call(store, noNetns);
    assert.deepEqual([r.exitCode, r.stdout], [0, ""]);
    assert.equal(store.records.size, 0);
  }
  // DEL succeeds whatever else the configuration says (a failed DEL would keep the pod).
  assert.equal(
    (await call(store, podEnv("DEL", "x"), pluginConf({ cniVersion: "9" }))).exitCode,
    0,
  );
});

Deno.test("CHECK: recorded and captured, else error 100 (no record) or 11", async () => {
  const store = new FakeAttachments();
  assert.equal(errorOf(await call(store, podEnv("CHECK", "web"))).code, 100);
  store.gate("shop/web").resolve();
  await call(store, podEnv("ADD", "web"));
  const r = await call(store, podEnv("CHECK", "web"));
  assert.deepEqual([r.exitCode, r.stdout], [0, ""]);
  const old = errorOf(
    await call(store, podEnv("CHECK", "web"), pluginConf({ cniVersion: "0.3.1" })),
  );
  assert.equal(old.code, 1);
});

Deno.test("VERSION, STATUS and GC", async () => {
  const store = new FakeAttachments();
  const v = await call(store, { CNI_COMMAND: "VERSION" }, { cniVersion: "0.4.0" });
  assert.deepEqual(JSON.parse(v.stdout), {
    cniVersion: "0.4.0",
    supportedVersions: [...SUPPORTED_VERSIONS],
  });
  const status = await call(store, { CNI_COMMAND: "STATUS" }, pluginConf({ cniVersion: "1.1.0" }));
  assert.equal(status.exitCode, 0);
  assert.equal(errorOf(await call(store, { CNI_COMMAND: "STATUS" })).code, 1, "needs 1.1.0");
  for (const name of ["a", "b"]) {
    store.gate(`shop/${name}`).resolve();
    await call(store, podEnv("ADD", name));
  }
  const gc = await call(
    store,
    { CNI_COMMAND: "GC" },
    pluginConf({
      cniVersion: "1.1.0",
      "cni.dev/valid-attachments": [{ containerID: "sandbox-b", ifname: "eth0" }],
    }),
  );
  assert.equal(gc.exitCode, 0, gc.stdout);
  assert.deepEqual([...store.records.keys()], ["shop/b"]);
});

Deno.test("bad input is a CNI error with the spec's code, never a throw", async () => {
  const store = new FakeAttachments();
  const { CNI_NETNS: _, ...noNetns } = podEnv("ADD", "web");
  const cases: [string, Record<string, string>, unknown, number, RegExp][] = [
    ["no command", {}, pluginConf(), 4, /CNI_COMMAND is not set/],
    ["unknown command", { CNI_COMMAND: "PATCH" }, pluginConf(), 4, /unknown CNI_COMMAND/],
    ["not JSON", podEnv("ADD", "web"), "{nope", 6, /not a JSON object/],
    ["a JSON array", podEnv("ADD", "web"), "[1]", 6, /not a JSON object/],
    ["version", podEnv("ADD", "web"), pluginConf({ cniVersion: "9.9.9" }), 1, /9\.9\.9/],
    [
      "exclude list",
      podEnv("ADD", "web"),
      pluginConf({ excludeNamespaces: "kube-system" }),
      7,
      /excludeNamespaces/,
    ],
    ["timeout", podEnv("ADD", "web"), pluginConf({ timeoutSeconds: 500 }), 7, /timeoutSeconds/],
    ["no prevResult", podEnv("ADD", "web"), pluginConf({ prevResult: undefined }), 7, /chained/],
    [
      "unknown arg",
      { ...podEnv("ADD", "web"), CNI_ARGS: "K8S_POD_NAMESPACE=shop;K8S_POD_NAME=web;X=1" },
      pluginConf(),
      4,
      /unknown argument "X"/,
    ],
    ["no netns", noNetns, pluginConf(), 4, /CNI_NETNS/],
    [
      "no container",
      { ...podEnv("ADD", "web"), CNI_CONTAINERID: "" },
      pluginConf(),
      4,
      /CONTAINERID/,
    ],
    [
      "bad pod name",
      { ...podEnv("ADD", "web"), CNI_ARGS: "K8S_POD_NAMESPACE=shop;K8S_POD_NAME=../etc" },
      pluginConf(),
      4,
      /no valid pod/,
    ],
  ];
  for (const [what, env, conf, code, msg] of cases) {
    const e = errorOf(await call(store, env, conf));
    assert.equal(e.code, code, what);
    assert.match(e.msg, msg, what);
  }
  assert.equal(store.records.size, 0);
});

Deno.test("CNI_ARGS: strict as libcni (IgnoreUnknown), lenient for the skip decision", () => {
  assert.deepEqual(strictPodArgs("IgnoreUnknown=1;K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;FOO=x"), {
    namespace: "a",
    name: "b",
  });
  assert.deepEqual(strictPodArgs("IgnoreUnknown=TRUE;K8S_POD_UID=u"), { uid: "u" });
  assert.match(strictPodArgs("IgnoreUnknown=0;FOO=x") as string, /unknown argument/);
  assert.match(strictPodArgs("IgnoreUnknown=maybe") as string, /IgnoreUnknown must be/);
  assert.match(strictPodArgs("K8S_POD_NAME") as string, /invalid pair/);
  assert.match(strictPodArgs("A=b=c") as string, /invalid pair/);
  assert.deepEqual(strictPodArgs(""), {});
  assert.deepEqual(lenientPodArgs("K8S_POD_NAME=a=b;junk;K8S_POD_NAMESPACE=x;K8S_POD_NAMESPACE="), {
    name: "a=b",
  });
});
