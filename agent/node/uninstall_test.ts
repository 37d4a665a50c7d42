/**
 * `agent node --capture --uninstall-when-gone`: when the agent closes, the pods' capture tables
 * go only when the check says aether is being uninstalled; otherwise, and when it cannot say
 * (no credentials here), they stay. The applier is the in-memory one; no Envoy (`envoy: "none"`).
 * The check itself against a real API server: e2e/helm_chart_test.ts.
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { MemorySource } from "../../testbed/memory_source.ts";
import { FakeApplier, pod, service } from "../capture/_capture_test_utils.ts";
import type { UninstallVerdict } from "../../cni/mod.ts";
import { type NodeAgentOptions, nodeDefaults, runNode } from "./run.ts";

const NODE = "node-u";

async function agentWith(extra: Partial<NodeAgentOptions>) {
  const applier = new FakeApplier();
  const lines: string[] = [];
  const agent = await runNode({
    ...nodeDefaults,
    source: new MemorySource([
      service("app", "web", ["10.96.0.10"], [80]),
      pod("app", "a", NODE, "/run/netns/a"),
      pod("app", "b", NODE, "/run/netns/b"),
    ]),
    nodeName: NODE,
    envoy: "none",
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    capture: true,
    captureApplier: applier,
    uninstallWhenGone: "aether-system/aether-agent",
    logger: new Logger("agent", (l) => lines.push(l), "info"),
    ...extra,
  });
  // The source's revision is applied as runNode starts.
  assert.deepEqual([...applier.tables.keys()].sort(), ["/run/netns/a", "/run/netns/b"]);
  return { agent, applier, lines };
}

const verdict = (v: UninstallVerdict) => () => Promise.resolve(v);

Deno.test("agent node --uninstall-when-gone: an uninstall removes every pod's table", async () => {
  let asked = 0;
  const { agent, applier, lines } = await agentWith({
    uninstallCheck: () => {
      asked++;
      return verdict({ uninstalling: true, known: true, reason: "daemonset is gone" })();
    },
  });
  assert.equal(asked, 0, "asked only on the way out");
  await agent.close();
  assert.equal(asked, 1);
  assert.deepEqual([...applier.tables.keys()], []);
  assert.ok(applier.closed);
  assert.ok(lines.some((l) => l.includes("pods' tables removed") && l.includes("is gone")));
});

Deno.test("agent node --uninstall-when-gone: not an uninstall, or no answer, keeps the tables", async () => {
  for (
    const [v, warned] of [
      [{ uninstalling: false, known: true, reason: "daemonset is in place" }, false],
      [{ uninstalling: false, known: false, reason: "API server unreachable" }, true],
    ] as const
  ) {
    const { agent, applier, lines } = await agentWith({ uninstallCheck: verdict(v) });
    await agent.close();
    assert.deepEqual([...applier.tables.keys()].sort(), ["/run/netns/a", "/run/netns/b"]);
    assert.ok(lines.some((l) => l.includes("pods' tables left in place")));
    assert.equal(lines.some((l) => l.includes("cannot tell whether")), warned, v.reason);
  }
  // The question that throws is no answer either.
  const { agent, applier } = await agentWith({ uninstallCheck: () => Promise.reject("boom") });
  await agent.close();
  assert.equal(applier.tables.size, 2);
});

Deno.test("agent node --uninstall-when-gone: the API server's check with no credentials keeps", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-uninstall-" });
  try {
    const { agent, applier, lines } = await agentWith({ kubeconfig: `${dir}/missing` });
    await agent.close();
    assert.equal(applier.tables.size, 2);
    assert.ok(lines.some((l) => l.includes("cannot tell") && l.includes("no API credentials")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agent node --uninstall-when-gone: needs --capture and <namespace>/<daemonset>", async () => {
  const base = {
    ...nodeDefaults,
    source: new MemorySource([]),
    nodeName: NODE,
    envoy: "none",
    logger: new Logger("agent", () => {}, "error"),
  };
  await assert.rejects(runNode({ ...base, uninstallWhenGone: "a/b" }), /needs --capture/);
  await assert.rejects(
    runNode({ ...base, capture: true, uninstallWhenGone: "b" }),
    /want <namespace>\/<daemonset>/,
  );
});
