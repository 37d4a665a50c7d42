/**
 * Mesh UDPRoute on the capture path (a step of e2e/cluster_capture_test.ts, on the experimental CRD
 * channel that UDPRoute lives in): two CoreDNS Deployments answer one name differently (v1
 * `192.0.2.1`, v2 `192.0.2.2`); the Service `dns` (UDP 53) selects v1 only, so kube-proxy alone
 * always answers v1. Without a UDPRoute the port is not captured; with a producer UDPRoute splitting
 * 50/50 the app namespace's unmodified busybox client (`nslookup`, a new socket per lookup, so a new
 * session each time) gets both answers, the consumer namespace's UDPRoute pins its client to v2,
 * an opted-out pod still gets v1 only (kube-proxy), and the node proxy's udp_proxy counted the
 * datagrams.
 * @module
 */
import assert from "node:assert/strict";
import type { Cluster } from "../testbed/cluster/mod.ts";
import { imageNames } from "../testbed/cluster/mod.ts";
import {
  type CaptureEnv,
  debugCapture,
  meshRoutesAccepted,
  nftIn,
  podPid,
  statSum,
} from "./cluster_capture.ts";
import { waitFor } from "./cluster_ha.ts";
import { rollout } from "./kubectl.ts";

const V1 = "192.0.2.1", V2 = "192.0.2.2";

/** A CoreDNS Deployment answering `probe.example` with `answer`, and its Service (UDP 53). */
const coredns = (ns: string, name: string, answer: string) => `
apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}, namespace: ${ns}}
data:
  Corefile: |
    .:1053 {
        ready :8181
        hosts {
            ${answer} probe.example
        }
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: coredns
        image: ${imageNames.coredns}
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 1}
        volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: ${name}}}]
---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {app: ${name}}
  ports: [{name: dns, port: 53, targetPort: 1053, protocol: UDP}]
`;

/** The parent Service: UDP 53 to v1's pods (what kube-proxy alone does). */
const parent = (ns: string) => `
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: ${ns}}
spec:
  selector: {app: dns-v1}
  ports: [{name: dns, port: 53, targetPort: 1053, protocol: UDP}]
`;

const udpRoute = (ns: string, name: string, parentNs: string, backends: string) => `
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: UDPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{group: "", kind: Service, name: dns, namespace: ${parentNs}, port: 53}]
  rules:
  - backendRefs: ${backends}
`;

/** The answers to `n` lookups of `probe.example` at `vip` from pod `pod` of `ns` (one socket each). */
async function answers(env: CaptureEnv, ns: string, pod: string, vip: string, n: number) {
  const script = `for i in $(seq ${n}); do nslookup -type=a probe.example ${vip} 2>&1 | ` +
    `grep -A1 '^Name:' | grep '^Address' || echo Address: NONE; done`;
  const out = await env.exec(ns, pod, ["sh", "-c", script]);
  return out.split("\n").filter((l) => l.startsWith("Address")).map((l) =>
    l.replace(/^Address( \d+)?:\s*/, "").trim()
  );
}

const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;

/** The UDP redirects `/debug/capture` shows for the app namespace's client pod. */
async function clientUdpEntries(c: Cluster, ns: string): Promise<number> {
  const doc = await debugCapture(c);
  return doc.pods.find((p: { key: string }) => p.key === `${ns}/client`).udp;
}

/** Not captured without a route; the producer split, the consumer's pin, pass-through when opted out. */
export async function meshUdpRoutes(c: Cluster, env: CaptureEnv): Promise<void> {
  const { app, consumer } = env.ns;
  await c.importImage("coredns");
  try {
    await env.k(
      ["apply", "-f", "-"],
      [coredns(app, "dns-v1", V1), coredns(app, "dns-v2", V2), parent(app)].join("---\n"),
    );
    for (const d of ["dns-v1", "dns-v2"]) await rollout(c.kubeconfig, app, `deployment/${d}`);
    const vip = (await env.json(["-n", app, "get", "service", "dns"])).spec.clusterIP;
    const before = await waitFor(
      "kube-proxy answers from v1 (no UDPRoute: not captured)",
      async () => {
        const got = await answers(env, app, "client", vip, 5);
        return got.length === 5 && got.every((a) => a === V1) ? got : undefined;
      },
      60_000,
    );
    assert.equal(before.length, 5);
    assert.equal(await clientUdpEntries(c, app), 0, "no UDP map entry without a UDPRoute");

    const datagramsBefore = await statSum(c, "aether_capture_udp", "downstream_sess_rx_datagrams");
    await env.k(
      ["apply", "-f", "-"],
      udpRoute(
        app,
        "split",
        app,
        "[{name: dns-v1, port: 53, weight: 50}, {name: dns-v2, port: 53, weight: 50}]",
      ) + "---\n" +
        udpRoute(consumer, "pin-v2", app, `[{name: dns-v2, namespace: ${app}, port: 53}]`),
    );
    await meshRoutesAccepted(env, "udproute", [[app, "split"], [consumer, "pin-v2"]]);
    const split = await waitFor(
      "lookups from the app namespace split between v1 and v2",
      async () => {
        const got = await answers(env, app, "client", vip, 20);
        const v1 = count(got, V1), v2 = count(got, V2);
        return v1 > 0 && v2 > 0 && v1 + v2 === got.length ? { v1, v2 } : undefined;
      },
      120_000,
    );
    const pinned = await waitFor("the consumer namespace's lookups pinned to v2", async () => {
      const got = await answers(env, consumer, "client", vip, 10);
      return got.length === 10 && got.every((a) => a === V2) ? got : undefined;
    }, 120_000);
    assert.equal(await clientUdpEntries(c, app), 1, "the client's table maps dns's VIP:53");
    const map = await nftIn(await podPid(env, app, "client"), [
      "list",
      "map",
      "inet",
      "aether",
      "udp-vips4",
    ]);
    assert.match(map, new RegExp(`${vip.replaceAll(".", "\\.")} \\. 53 : 151\\d\\d`));
    const optedOut = await answers(env, app, "opted-out", vip, 5);
    assert.deepEqual(optedOut, [V1, V1, V1, V1, V1], "an opted-out pod reaches kube-proxy");
    const datagrams = await statSum(c, "aether_capture_udp", "downstream_sess_rx_datagrams") -
      datagramsBefore;
    console.log(
      `mesh UDPRoute: 20 lookups from ${app} → v1 ${split.v1}, v2 ${split.v2}; ` +
        `${pinned.length} from ${consumer} → all v2; opted-out → v1 ×5; ` +
        `${datagrams} datagrams through the node proxy's UDP listeners`,
    );
    assert.ok(split.v1 >= 3 && split.v2 >= 3, `a 50/50 split of 20: ${JSON.stringify(split)}`);
    assert.ok(datagrams >= 30, `udp_proxy counted ${datagrams} datagrams`);
  } finally {
    await env.k(["-n", app, "delete", "udproute", "split", "--ignore-not-found"]).catch(() => {});
    await env.k(["-n", consumer, "delete", "udproute", "pin-v2", "--ignore-not-found"])
      .catch(() => {});
  }
}
