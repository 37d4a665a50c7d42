/**
 * KubeSource on a real kube-apiserver with a kind read in one namespace only (`namespaceOf`, as
 * the controller reads EndpointSlices): that namespace's objects arrive, another's never do,
 * while the kinds read everywhere still see both.
 */
import { assert, assertEquals } from "../../testbed/assert.ts";
import { Logger } from "../log/mod.ts";
import type { SourceRevision } from "../source/mod.ts";
import { startKube } from "../../e2e/peers/kube.ts";
import { contractService } from "../source/_contract_test_utils.ts";
import { KubeClient } from "./client.ts";
import { KubeSource } from "./source.ts";

Deno.test("kube source: a kind read in one namespace only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-kube-scope-" });
  const kube = await startKube(dir);
  const must = async (method: string, path: string, body?: unknown) => {
    const res = await kube.request(method, path, body);
    assert(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  };
  let last: SourceRevision | undefined;
  const source = new KubeSource({
    client: new KubeClient({ kubeconfig: kube.kubeconfig }),
    kinds: ["Namespace", "Service"],
    namespaceOf: { Service: "mine" },
    logger: new Logger("kube-scope-test", () => {}),
    backoff: { initialMs: 100, maxMs: 1000 },
  });
  const names = (kind: string) =>
    (last?.objects ?? []).filter((o) => o.kind === kind).map((o) =>
      `${o.metadata.namespace ?? ""}/${o.metadata.name}`
    ).sort();
  const until = async (what: string, ok: () => boolean) => {
    const deadline = Date.now() + 120_000;
    while (!ok()) {
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}: ${names("Service")}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    for (const ns of ["mine", "other"]) {
      await must("POST", "/api/v1/namespaces", { metadata: { name: ns } });
      await must("POST", `/api/v1/namespaces/${ns}/services`, contractService("one", ns));
    }
    await source.start((r) => (last = r));
    await until("mine/one", () => names("Service").includes("mine/one"));
    assertEquals(names("Service"), ["mine/one"]);
    // Created first in the other namespace, then in ours: once ours is seen, the other's would
    // have been too had it been read.
    await must("POST", "/api/v1/namespaces/other/services", contractService("two", "other"));
    await must("POST", "/api/v1/namespaces/mine/services", contractService("two", "mine"));
    await until("mine/two", () => names("Service").includes("mine/two"));
    assertEquals(names("Service"), ["mine/one", "mine/two"]);
    assert(names("Namespace").includes("/other"), "Namespaces are read everywhere");
  } finally {
    await source.stop();
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
