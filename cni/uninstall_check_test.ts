/**
 * The uninstall check over an injected fetcher: each answer of the API server and what it means,
 * the path asked, the timeout handed to the fetcher, and the ref parser. e2e/helm_chart_test.ts
 * asks a real kube-apiserver with the chart's ServiceAccount, through both fetchers.
 */
import assert from "node:assert/strict";
import {
  type GetResponse,
  inClusterGet,
  parseDaemonSetRef,
  releaseUninstalling,
} from "./uninstall_check.ts";

const REF = { namespace: "aether-system", name: "aether-agent" };

function answering(res: GetResponse | Error) {
  const asked: string[] = [];
  const signals: AbortSignal[] = [];
  const get = (path: string, signal: AbortSignal) => {
    asked.push(path);
    signals.push(signal);
    return res instanceof Error ? Promise.reject(res) : Promise.resolve(res);
  };
  return { get, asked, signals };
}

Deno.test("uninstall check: what each answer of the API server means", async () => {
  const cases: [GetResponse | Error, boolean, boolean, RegExp][] = [
    [{ status: 200, json: { metadata: { name: "aether-agent" } } }, false, true, /in place/],
    [
      { status: 200, json: { metadata: { deletionTimestamp: "2025-01-01T00:00:00Z" } } },
      true,
      true,
      /being deleted \(deletionTimestamp 2025-01-01T00:00:00Z\)/,
    ],
    [{ status: 404, json: { reason: "NotFound" } }, true, true, /is gone/],
    [{ status: 401, json: "Unauthorized" }, true, true, /ServiceAccount is gone/],
    [{ status: 403, json: { message: "forbidden" } }, true, true, /RBAC is gone/],
    [{ status: 500, json: { message: "etcd down" } }, false, false, /answered 500: etcd down/],
    [{ status: 429, json: "slow down" }, false, false, /answered 429: slow down/],
    [new TypeError("connection refused"), false, false, /unreachable: connection refused/],
  ];
  for (const [res, uninstalling, known, reason] of cases) {
    const f = answering(res);
    const v = await releaseUninstalling(REF, f.get);
    assert.equal(v.uninstalling, uninstalling, JSON.stringify(res));
    assert.equal(v.known, known, JSON.stringify(res));
    assert.match(v.reason, reason);
    assert.deepEqual(f.asked, ["/apis/apps/v1/namespaces/aether-system/daemonsets/aether-agent"]);
  }
});

Deno.test("uninstall check: a fetcher that never answers is cut off by the timeout", async () => {
  const get = (_: string, signal: AbortSignal) =>
    new Promise<GetResponse>((_, reject) =>
      signal.addEventListener("abort", () => reject(signal.reason))
    );
  const v = await releaseUninstalling(REF, get, { timeoutMs: 20 });
  assert.deepEqual([v.uninstalling, v.known], [false, false]);
  assert.match(v.reason, /unreachable/);
});

Deno.test("uninstall check: in-cluster credentials missing is no answer, never uninstalling", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-sa-" });
  try {
    for (const o of [{ host: "" }, { host: "127.0.0.1", port: "1", dir }]) {
      const v = await releaseUninstalling(REF, inClusterGet(o));
      assert.deepEqual([v.uninstalling, v.known], [false, false], v.reason);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("uninstall check: <namespace>/<daemonset> and nothing else", () => {
  assert.deepEqual(parseDaemonSetRef("aether-system/aether-agent"), REF);
  for (const bad of ["aether-agent", "a/b/c", "/b", "a/", "A/b", "a/b c", ""]) {
    assert.throws(() => parseDaemonSetRef(bad), /want <namespace>\/<daemonset>/, bad);
  }
});

Deno.test("uninstall check: no answer is asked again until an answer or the retry window's end", async () => {
  let t = 0;
  const clock = { now: () => t, sleep: (ms: number) => Promise.resolve(void (t += ms)) };
  const answers: (GetResponse | Error)[] = [
    new TypeError("connection refused"),
    { status: 503, json: { message: "starting" } },
    { status: 404, json: {} },
  ];
  const get = () => {
    const a = answers.shift()!;
    return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
  };
  const v = await releaseUninstalling(REF, get, { retryForMs: 15_000, ...clock });
  assert.deepEqual([v.uninstalling, v.known], [true, true]);
  assert.match(v.reason, /is gone \(after 3 questions\)/);
  assert.equal(t, 2_000, "one second between questions");

  // Never an answer: given up at the window's end, still "keep".
  t = 0;
  const none = () => Promise.reject(new TypeError("connection refused"));
  const w = await releaseUninstalling(REF, none, { retryForMs: 15_000, ...clock });
  assert.deepEqual([w.uninstalling, w.known], [false, false]);
  assert.match(w.reason, /unreachable: connection refused \(after 16 questions\)/);
  assert.ok(t <= 15_000);
});
