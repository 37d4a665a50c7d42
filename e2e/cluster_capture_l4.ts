/**
 * Mesh L4 on the capture path (a step of e2e/cluster_capture_test.ts): TCPRoutes and TLSRoutes
 * with a Service parent. The cluster goes to the experimental CRD channel (TCPRoute exists only there) while the
 * chart's controller and node agents run, so they must pick the new kind up; a producer TCPRoute
 * splits `tcp-echo:9000`'s connections between tcp-echo and tcp-echo-v2, a consumer TCPRoute sends
 * its namespace's connections to tcp-echo-v2 only, and the controller writes both routes' status.
 * Unmodified busybox clients dial the Service by name with `nc`; Istio's TCP echo answers with the
 * serving pod's host name. TLSRoutes then route `tls-echo:443` by SNI (curl from the client pod's
 * netns; Istio's echo answers HTTPS with its host name): an exact name to v2, a wildcard to v1. UDPRoutes
 * follow (cluster_capture_udp.ts). The standard channel comes back afterwards.
 * @module
 */
import assert from "node:assert/strict";
import type { Cluster } from "../testbed/cluster/mod.ts";
import { imageNames } from "../testbed/cluster/mod.ts";
import { useChannel } from "../testbed/conformance/mod.ts";
import { type CaptureEnv, meshRoutesAccepted, podPid } from "./cluster_capture.ts";
import { istioEchoDeployment } from "./cluster_fixtures.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { waitFor } from "./cluster_ha.ts";
import { rollout } from "./kubectl.ts";
import { meshUdpRoutes } from "./cluster_capture_udp.ts";

const v2 = (ns: string) =>
  istioEchoDeployment("tcp-echo-v2", ns, imageNames.echoAdvanced) + `---
apiVersion: v1
kind: Service
metadata: {name: tcp-echo-v2, namespace: ${ns}}
spec:
  selector: {app: tcp-echo-v2}
  ports:
  - {name: floor, port: 9000, targetPort: 9090, appProtocol: tcp}
  - {name: tls, port: 443, targetPort: 8443}
---
apiVersion: v1
kind: Service
metadata: {name: tls-echo, namespace: ${ns}}
spec:
  selector: {app: tcp-echo}
  ports: [{name: tls, port: 443, targetPort: 8443}]
`;

const tlsRoute = (ns: string, name: string, hostname: string, backend: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{group: "", kind: Service, name: tls-echo, port: 443}]
  hostnames: ["${hostname}"]
  rules:
  - backendRefs: [{name: ${backend}, port: 443}]
`;

/**
 * The pod serving an HTTPS request with SNI `name` to `vip`:443, made from inside pod `client` of
 * `ns` (its netns, entered from the host: the client's bytes leave from the pod like any app's).
 */
async function servedTls(env: CaptureEnv, ns: string, vip: string, name: string) {
  const pid = await podPid(env, ns, "client");
  const out = await new Deno.Command("nsenter", {
    args: [
      "-t",
      String(pid),
      "-n",
      await ensurePeer("curl"),
      "-sk",
      "-m",
      "5",
      "--resolve",
      `${name}:443:${vip}`,
      `https://${name}/`,
    ],
    stdout: "piped",
  }).output();
  const m = new TextDecoder().decode(out.stdout).match(/Hostname=(\S+)/);
  return m?.[1];
}

const tcpRoute = (ns: string, name: string, parentNs: string, backends: string) => `
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{group: "", kind: Service, name: tcp-echo, namespace: ${parentNs}, port: 9000}]
  rules:
  - backendRefs: ${backends}
`;

/** The pod names serving `n` fresh TCP connections from pod `client` of `ns` to `target`. */
async function served(env: CaptureEnv, ns: string, target: string, n: number): Promise<string[]> {
  const script = `for i in $(seq ${n}); do printf 'hi\\n' | nc -w 3 ${target} 9000 | ` +
    `grep '^Hostname=' || echo Hostname=NONE; done`;
  const out = await env.exec(ns, "client", ["sh", "-c", script]);
  return out.split("\n").filter((l) => l.startsWith("Hostname=")).map((l) => l.slice(9).trim());
}

/** The producer split, the consumer's pin and both routes' status, on the experimental channel. */
export async function meshTcpRoutes(c: Cluster, env: CaptureEnv): Promise<void> {
  const { app, consumer } = env.ns;
  const target = `tcp-echo.${app}`;
  await useChannel(c.kubeconfig, "experimental");
  try {
    await env.k(["apply", "-f", "-"], v2(app));
    await rollout(c.kubeconfig, app, "deployment/tcp-echo-v2");
    await env.k(
      ["apply", "-f", "-"],
      tcpRoute(
        app,
        "split",
        app,
        "[{name: tcp-echo, port: 9000, weight: 50}, {name: tcp-echo-v2, port: 9000, weight: 50}]",
      ) + "---\n" +
        tcpRoute(consumer, "pin-v2", app, `[{name: tcp-echo-v2, namespace: ${app}, port: 9000}]`),
    );
    await meshRoutesAccepted(env, "tcproute", [[app, "split"], [consumer, "pin-v2"]]);
    // The node proxy's config follows the routes a moment after their status: until both
    // backends answer, the split is not in place yet.
    const split = await waitFor("connections to tcp-echo split between v1 and v2", async () => {
      const pods = await served(env, app, target, 20);
      const v1 = pods.filter((p) => /^tcp-echo-(?!v2)/.test(p)).length;
      const v2n = pods.filter((p) => p.startsWith("tcp-echo-v2-")).length;
      return v1 > 0 && v2n > 0 && v1 + v2n === pods.length ? { v1, v2: v2n } : undefined;
    }, 120_000);
    const pinned = await waitFor("the consumer namespace pinned to tcp-echo-v2", async () => {
      const pods = await served(env, consumer, target, 10);
      return pods.length === 10 && pods.every((p) => p.startsWith("tcp-echo-v2-"))
        ? pods
        : undefined;
    }, 120_000);
    console.log(
      `mesh TCPRoute: 20 connections from ${app} → v1 ${split.v1}, v2 ${split.v2}; ` +
        `${pinned.length} from ${consumer} → all v2`,
    );
    assert.ok(split.v1 >= 3 && split.v2 >= 3, `a 50/50 split of 20: ${JSON.stringify(split)}`);

    // TLSRoutes by SNI on tls-echo:443: v2.example.com to tcp-echo-v2, *.example.com to tcp-echo.
    await env.k(
      ["apply", "-f", "-"],
      tlsRoute(app, "sni-v2", "v2.example.com", "tcp-echo-v2") + "---\n" +
        tlsRoute(app, "sni-wild", "*.example.com", "tls-echo"),
    );
    const vip = (await env.json(["-n", app, "get", "service", "tls-echo"])).spec.clusterIP;
    const bySni = await waitFor("TLS connections routed by their SNI", async () => {
      const v2pod = await servedTls(env, app, vip, "v2.example.com");
      const wild = await servedTls(env, app, vip, "other.example.com");
      return v2pod?.startsWith("tcp-echo-v2-") && /^tcp-echo-(?!v2)/.test(wild ?? "")
        ? { v2pod, wild }
        : undefined;
    }, 120_000);
    console.log(
      `mesh TLSRoute: SNI v2.example.com → ${bySni.v2pod}, other.example.com → ${bySni.wild}`,
    );
    await meshUdpRoutes(c, env);
  } finally {
    await env.k(["-n", app, "delete", "tcproute", "split", "--ignore-not-found"]).catch(() => {});
    await env.k(["-n", app, "delete", "tlsroute", "sni-v2", "sni-wild", "--ignore-not-found"])
      .catch(() => {});
    await env.k(["-n", consumer, "delete", "tcproute", "pin-v2", "--ignore-not-found"])
      .catch(() => {});
    await useChannel(c.kubeconfig, "standard");
  }
}
