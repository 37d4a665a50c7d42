/**
 * Identity on the local cluster under load (e2e/cluster_identity_test.ts): SPIRE's server and the
 * node's SPIRE agent each deleted while the app namespace's client pod sends 100 req/s of captured
 * mTLS traffic, SVID rotations under load with only secrets pushed to the node proxy, and how soon
 * new pods of new identities serve mTLS.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Cluster, imageNames } from "../testbed/cluster/mod.ts";
import { projectRoot } from "../testbed/peers/mod.ts";
import {
  type CaptureEnv,
  nodeAgentJson,
  nodeProxyAdmin,
  nodeProxyStats,
  podPid,
  wgetEcho,
} from "./cluster_capture.ts";
import { assertNoneFailed, underCapturedLoad } from "./cluster_capture_lifecycle.ts";
import { releaseNs, waitFor } from "./cluster_ha.ts";
import { rollout } from "./kubectl.ts";

/** The node agent's identity view (`/status`). */
interface NodeIdentity {
  spireConnected: boolean;
  svids: { spiffeId: string; expiresAt: string }[];
}

const nodeIdentity = async (c: Cluster): Promise<NodeIdentity> =>
  (await nodeAgentJson(c, "/status")).identity;

/** A captured call from the app's client to web carries XFCC (it went over mTLS). */
export async function assertMtls(env: CaptureEnv, what: string): Promise<void> {
  const e = await wgetEcho(env, env.ns.app, "client", `http://web.${env.ns.app}:8080/${what}`);
  assert.ok(e.headers["x-forwarded-client-cert"], `${what}: ${JSON.stringify(e.headers)}`);
}

/** Deletes the pod of `selector` in aether's namespace; resolves once a new one is Ready. */
async function replacePod(env: CaptureEnv, c: Cluster, selector: string, owner: string) {
  const pods = async () =>
    (await env.json(["-n", releaseNs, "get", "pods", "-l", selector])).items as {
      metadata: { uid: string; name: string };
      status: { conditions?: { type: string; status: string }[] };
    }[];
  const [old] = await pods();
  await env.k(["-n", releaseNs, "delete", "pod", old.metadata.name, "--wait=false"]);
  await waitFor(`a new ${selector} pod Ready`, async () => {
    const now = await pods();
    return now.some((p) =>
        p.metadata.uid !== old.metadata.uid &&
        p.status.conditions?.some((x) => x.type === "Ready" && x.status === "True")
      )
      ? true
      : undefined;
  }, 180_000);
  await rollout(c.kubeconfig, releaseNs, owner);
}

/** The SPIRE server pod deleted under captured mTLS load: no request fails. */
export async function spireServerDeleted(env: CaptureEnv, c: Cluster, vip: string) {
  await assertMtls(env, "before-server");
  const r = await underCapturedLoad(env, vip, () =>
    replacePod(
      env,
      c,
      "app.kubernetes.io/component=spire-server",
      "statefulset/spire-server",
    ));
  assertNoneFailed("spire-server pod deleted under load", r);
  await assertMtls(env, "after-server");
}

/**
 * The node's SPIRE agent pod deleted under captured mTLS load: no request fails, and the node
 * agent re-subscribes (its identity view connected again, SVIDs held).
 */
export async function spireAgentDeleted(env: CaptureEnv, c: Cluster, vip: string) {
  const r = await underCapturedLoad(env, vip, async () => {
    await replacePod(env, c, "app.kubernetes.io/component=spire-agent", "daemonset/spire-agent");
    const t0 = Date.now();
    await waitFor("the node agent re-subscribed to the new SPIRE agent", async () => {
      const id = await nodeIdentity(c);
      return id.spireConnected && id.svids.length > 0 ? true : undefined;
    }, 60_000);
    console.log(`node agent re-subscribed ${Date.now() - t0} ms after the SPIRE agent was Ready`);
  });
  assertNoneFailed("spire-agent pod deleted under load", r);
  await assertMtls(env, "after-agent");
}

/** Sent versions by xDS type of the node's stream (`/debug/xds`). */
async function sentVersions(c: Cluster): Promise<Map<string, string>> {
  const doc = await nodeAgentJson(c, "/debug/xds");
  const stream = doc.streams.find((s: { nodeId: string }) => s.nodeId === c.layout.nodeName);
  return new Map(
    (stream.types as { typeUrl: string; sentVersion: string }[]).map((
      t,
    ) => [t.typeUrl.split(".").pop()!, t.sentVersion]),
  );
}

/**
 * With a short SVID TTL, two rotations of the caller's and the callee's SVID under captured load:
 * no request fails, and the node proxy got new secrets only (listeners, clusters and routes kept
 * their versions).
 */
export async function rotationsUnderLoad(env: CaptureEnv, c: Cluster, vip: string) {
  const id = `spiffe://cluster.local/ns/${env.ns.app}/sa/default`;
  const expiry = async () =>
    (await nodeIdentity(c)).svids.find((s) => s.spiffeId === id)?.expiresAt;
  const before = await sentVersions(c);
  const seen = new Set<string>();
  const r = await underCapturedLoad(env, vip, async () => {
    const first = await expiry();
    assert.ok(first, `the node holds ${id}`);
    seen.add(first);
    await waitFor("two rotations of the pods' SVID", async () => {
      const e = await expiry();
      if (e) seen.add(e);
      return seen.size >= 3 ? true : undefined;
    }, 300_000);
  });
  assertNoneFailed("two SVID rotations under load", r);
  const after = await sentVersions(c);
  assert.notEqual(after.get("Secret"), before.get("Secret"), "new secrets were pushed");
  for (const type of ["Listener", "Cluster", "RouteConfiguration"]) {
    assert.equal(after.get(type), before.get(type), `${type} not pushed by a rotation`);
  }
}

/** `n` pods, each of a new service account (a new identity), with a Service each. */
function burst(ns: string, n: number): string {
  const docs: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = `burst-${i}`;
    docs.push(`apiVersion: v1
kind: ServiceAccount
metadata: {name: ${name}, namespace: ${ns}}
---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {burst: "${i}"}
  ports: [{name: http, port: 8080, targetPort: 3000}]
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}, labels: {burst: "${i}"}}
spec:
  serviceAccountName: ${name}
  terminationGracePeriodSeconds: 0
  containers:
  - name: echo
    image: ${imageNames.echoBasic}
    imagePullPolicy: Never
    env:
    - {name: POD_NAME, value: ${name}}
    - {name: NAMESPACE, value: ${ns}}
`);
  }
  return docs.join("---\n");
}

/**
 * What the node knows of pods that never served mTLS, printed before the step fails: each pod's
 * phase, IP and start time, its entry in the node agent's `/debug/capture` (table, listener,
 * served), and the agent's log lines that name it (the cluster is gone by the time anyone reads
 * the failure, so this is all there is).
 */
async function explainMissing(env: CaptureEnv, c: Cluster, names: string[]) {
  const { app } = env.ns;
  const tryText = async (what: string, f: () => Promise<string>) => {
    try {
      return await f();
    } catch (e) {
      return `(${what} failed: ${(e as Error).message.slice(0, 200)})`;
    }
  };
  let pods: { name: string; phase?: string; ip?: string; started?: string }[] = [];
  const podsText = await tryText("get pods", async () => {
    const items = (await env.json(["-n", app, "get", "pods", "-l", "burst"])).items as {
      metadata: { name: string };
      status: { phase?: string; podIP?: string; startTime?: string };
    }[];
    pods = items.filter((p) => names.includes(p.metadata.name)).map((p) => ({
      name: p.metadata.name,
      phase: p.status.phase,
      ip: p.status.podIP,
      started: p.status.startTime,
    }));
    return JSON.stringify(pods);
  });
  const capture = await tryText("/debug/capture", async () => {
    const doc = await nodeAgentJson(c, "/debug/capture");
    const list = (doc?.pods ?? []) as { name?: string }[];
    return JSON.stringify(list.filter((p) => names.includes(p.name ?? "")));
  });
  const logs = await tryText("agent logs", async () => {
    const text = await env.k(["-n", releaseNs, "logs", "ds/aether-agent", "-c", "agent"]);
    return text.split("\n").filter((l) =>
      names.some((n) => l.includes(`"${n}"`) || l.includes(`/${n}"`))
    ).slice(-40).join("\n");
  });
  // Envoy's own word on their inbound listeners (podIP:15008 in the pod's netns): a bind or
  // config error names the address.
  const ips = pods.flatMap((p) => p.ip ? [p.ip] : []);
  const envoy = await tryText("node proxy logs", async () => {
    const text = await env.k(["-n", releaseNs, "logs", "ds/aether-node-proxy", "--tail=5000"]);
    return text.split("\n").filter((l) => ips.some((ip) => l.includes(`${ip}:`)))
      .slice(-20).join("\n");
  });
  // Whether the node proxy holds each pod's inbound listener (translate's side) at all.
  const inbound = await tryText("node proxy /listeners", async () => {
    const text = await nodeProxyAdmin(c, "/listeners");
    const held = new Set(text.split("\n").map((l) => l.split("::")[0]));
    return JSON.stringify(
      Object.fromEntries(names.map((n) => [n, held.has(`inbound|${app}/${n}`)])),
    );
  });
  console.log(
    `pods that never served mTLS: ${podsText}\n  node agent /debug/capture for them: ${capture}\n` +
      `  node agent log lines naming them (last 40):\n${logs}\n` +
      `  node proxy (Envoy) log lines naming their addresses (last 20):\n${envoy}\n` +
      `  node proxy holds their inbound listener (inbound|<ns>/<pod>): ${inbound}`,
  );
}

/** The `q` quantile (0–1) of `xs` (nearest rank). */
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];

/**
 * `n` new pods, each of a new identity, created at once: for each, the time from `kubectl apply`
 * until a captured caller gets its answer over mTLS with the pod's own SPIFFE ID (registration,
 * SVID, the pod's :15008 chain, the caller's cluster). Every pod within `boundS`; p50 and p99
 * printed. The node proxy then holds mTLS clusters for what callers called (the client's `n`),
 * not for every new identity × every Service: fewer than 6 clusters per new pod.
 */
export async function newPodsServeMtls(
  env: CaptureEnv,
  c: Cluster,
  n: number,
  boundS: number,
) {
  const before = (await nodeProxyStats(c, "^cluster_manager.active_clusters$"))
    .get("cluster_manager.active_clusters") ?? 0;
  const { app } = env.ns;
  const manifest = burst(app, n);
  const wall0 = Date.now();
  const t0 = performance.now();
  await env.k(["apply", "-f", "-"], manifest);
  const services = (await env.json(["-n", app, "get", "services"])).items as {
    metadata: { name: string };
    spec: { clusterIP: string };
  }[];
  const targets = services.filter((s) => s.metadata.name.startsWith("burst-"))
    .map((s) => `--target=${s.metadata.name}=${s.spec.clusterIP}`);
  assert.equal(targets.length, n);
  const pid = await podPid(env, app, "client");
  const offset = performance.now() - t0;
  const out = await new Deno.Command("nsenter", {
    args: [
      ...["-t", String(pid), "-n", Deno.execPath(), "run", "-A"],
      join(projectRoot, "e2e", "mtls_ready_client.ts"),
      `--namespace=${app}`,
      `--seconds=${boundS}`,
      ...targets,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const r = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!) as {
    readyMs: Record<string, number>;
    missing: string[];
    lastSeen: Record<string, string>;
  };
  const ms = Object.values(r.readyMs).map((v) => v + offset);
  console.log(
    `${n} new pods of new identities serving mTLS after kubectl apply: p50 ${
      Math.round(quantile(ms, 0.5))
    } ms, p99 ${Math.round(quantile(ms, 0.99))} ms, max ${Math.round(Math.max(...ms))} ms`,
  );
  if (r.missing.length > 0) await explainMissing(env, c, r.missing);
  assert.deepEqual(
    r.missing,
    [],
    `pods not serving mTLS within ${boundS} s; their last answers: ${JSON.stringify(r.lastSeen)}`,
  );
  // Where the time went: each pod's Ready (the kubelet's view, whole seconds) from the apply.
  const pods = (await env.json(["-n", app, "get", "pods", "-l", "burst"])).items as {
    status: { conditions?: { type: string; status: string; lastTransitionTime: string }[] };
  }[];
  const readyAt = pods.flatMap((p) =>
    (p.status.conditions ?? []).filter((x) => x.type === "Ready" && x.status === "True")
      .map((x) => Date.parse(x.lastTransitionTime) - wall0)
  );
  console.log(
    `  those pods Ready (kubelet, 1 s steps): p50 ${quantile(readyAt, 0.5)} ms, ` +
      `p99 ${quantile(readyAt, 0.99)} ms, first ${Math.min(...readyAt)} ms`,
  );
  // … and their SVIDs at the node agent (its "SVID" log lines).
  const logs = await env.k(["-n", releaseNs, "logs", "ds/aether-agent", "-c", "agent"]);
  const svidAt = logs.split("\n").flatMap((l) => {
    try {
      const j = JSON.parse(l);
      return j.msg === "SVID" && String(j.spiffeId).includes("/sa/burst-")
        ? [Date.parse(j.ts) - wall0]
        : [];
    } catch {
      return [];
    }
  });
  if (svidAt.length) {
    console.log(
      `  their first SVIDs at the node agent: p50 ${quantile(svidAt, 0.5)} ms, ` +
        `p99 ${quantile(svidAt, 0.99)} ms, first ${Math.min(...svidAt)} ms (${svidAt.length})`,
    );
  }
  const after = await nodeProxyStats(
    c,
    "^(cluster_manager.active_clusters|server.memory_allocated|server.memory_heap_size)$",
  );
  const clusters = after.get("cluster_manager.active_clusters") ?? 0;
  const mib = (k: string) => Math.round((after.get(k) ?? 0) / 2 ** 20);
  console.log(
    `node proxy after ${n} new pods: ${clusters} clusters (${before} before), ` +
      `${mib("server.memory_allocated")} MiB allocated, ${mib("server.memory_heap_size")} MiB heap`,
  );
  assert.ok(
    clusters - before < 6 * n,
    `${clusters - before} new clusters for ${n} new pods: caller clusters are not demand-scoped`,
  );
  await env.k(["delete", "--wait=false", "-f", "-"], manifest);
}
