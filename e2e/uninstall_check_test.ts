/**
 * `--uninstall-when-gone`'s check (cni/uninstall_check.ts) on a real RBAC-enforcing
 * kube-apiserver, with the chart's own node-agent objects (its ServiceAccount, DaemonSet and the
 * uninstall Role and RoleBinding, from `helm template`) and a token of that ServiceAccount,
 * through both fetchers: the installer's in-cluster one (token and CA files as the kubelet mounts
 * them) and the agent's (lib/kube's KubeClient). It says "in place" while the DaemonSet is, then
 * "uninstalling" at each step of helm's uninstall order — the DaemonSet being deleted (foreground:
 * a deletionTimestamp), gone, its RoleBinding gone (403), its ServiceAccount gone (401) — and
 * gives no answer, so keeps, when nothing listens.
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer, projectRoot } from "../testbed/peers/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { inClusterGet, type KubeGet, releaseUninstalling } from "../cni/mod.ts";
import { startKube } from "./peers/kube.ts";
import { exec, waitFor } from "./peers/proc.ts";

const NS = "aether-system";
// deno-lint-ignore no-explicit-any
type Any = any;

const kubeconfigOf = (url: string, ca: string, token: string) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "t", cluster: { server: url, "certificate-authority-data": btoa(ca) } }],
    users: [{ name: "sa", user: { token } }],
    contexts: [{ name: "t", context: { cluster: "t", user: "sa" } }],
    "current-context": "t",
  });

Deno.test("uninstall check on a real API server, through helm's uninstall order", async () => {
  const helm = await ensurePeer("helm");
  const dir = await Deno.makeTempDir({ prefix: "aether-uninstall-check-" });
  const k = await startKube(dir, { authorization: "RBAC" });
  let client: KubeClient | undefined;
  try {
    const r = await exec(helm, [
      ...["template", "aether", join(projectRoot, "charts", "aether"), "-n", NS],
      ...["--set", "agent.gamma=true", "--set", "transparentCapture=true"],
      ...["-s", "templates/node_agent.yaml"],
      ...["-s", "templates/rbac.yaml"],
    ]);
    assertEquals(r.code, 0, r.stderr);
    const docs: Any[] = parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
    const apps = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}`;
    const sas = `/api/v1/namespaces/${NS}/serviceaccounts`;
    const where: Record<string, string> = {
      ServiceAccount: sas,
      DaemonSet: apps,
      Role: `${rbac}/roles`,
      RoleBinding: `${rbac}/rolebindings`,
    };
    assertEquals(
      (await k.request("POST", "/api/v1/namespaces", { metadata: { name: NS } })).status,
      201,
    );
    for (const d of docs) {
      const isAgent = d.metadata.name === "aether-agent" || d.metadata.name.endsWith("-uninstall");
      if (!isAgent || !where[d.kind]) continue;
      const res = await k.request("POST", where[d.kind], d);
      assertEquals(res.status, 201, `${d.kind} ${JSON.stringify(res.json)}`);
    }
    const tr = await k.request("POST", `${sas}/aether-agent/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 3600 },
    });
    assertEquals(tr.status, 201, JSON.stringify(tr.json));
    const ca = await Deno.readTextFile(join(k.pki, "ca.crt"));
    const sa = join(dir, "serviceaccount"); // as the kubelet mounts it
    await Deno.mkdir(sa);
    await Deno.writeTextFile(join(sa, "ca.crt"), ca);
    await Deno.writeTextFile(join(sa, "token"), tr.json.status.token);
    const kubeconfig = join(dir, "agent.kubeconfig");
    await Deno.writeTextFile(kubeconfig, kubeconfigOf(k.url, ca, tr.json.status.token));
    const kc = client = new KubeClient({ kubeconfig });
    const port = new URL(k.url).port;
    const gets: KubeGet[] = [
      inClusterGet({ host: "127.0.0.1", port, dir: sa }),
      (path, signal) => kc.request("GET", path, undefined, undefined, signal),
    ];
    const ref = { namespace: NS, name: "aether-agent" };
    /** The verdict once its reason matches (RBAC and token caches follow a delete shortly). */
    const verdict = (reason: RegExp) =>
      waitFor(
        `the check says ${reason}`,
        async () => {
          const [a, b] = await Promise.all(gets.map((g) => releaseUninstalling(ref, g)));
          assertEquals(a, b, "both fetchers agree");
          return reason.test(a.reason) ? a : undefined;
        },
        60_000,
        k.procs,
      );

    assertEquals(await verdict(/in place/), {
      uninstalling: false,
      known: true,
      reason: `daemonset ${NS}/aether-agent is in place`,
    });
    // A foreground delete leaves a deletionTimestamp (no garbage collector runs here).
    const del = await k.request("DELETE", `${apps}/aether-agent`, {
      propagationPolicy: "Foreground",
    });
    assertEquals(del.status, 200, JSON.stringify(del.json));
    assert((await verdict(/being deleted \(deletionTimestamp /)).uninstalling);
    await k.request("PATCH", `${apps}/aether-agent`, { metadata: { finalizers: null } });
    assert((await verdict(/is gone/)).uninstalling);
    // helm uninstall goes on with the RoleBindings, Roles, …, ServiceAccounts.
    assertEquals(
      (await k.request("DELETE", `${rbac}/rolebindings/aether-agent-uninstall`)).status,
      200,
    );
    assert((await verdict(/\(403\): its RBAC is gone/)).uninstalling);
    assertEquals((await k.request("DELETE", `${sas}/aether-agent`)).status, 200);
    assert((await verdict(/\(401\): its ServiceAccount is gone/)).uninstalling);
    // Nothing listening: no answer, so keep.
    const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    closed.close();
    const none = inClusterGet({ host: "127.0.0.1", port: String(closed.addr.port), dir: sa });
    const v = await releaseUninstalling(ref, none);
    assertEquals([v.uninstalling, v.known], [false, false], v.reason);
    assert(/unreachable/.test(v.reason), v.reason);
  } finally {
    client?.close();
    await k.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
