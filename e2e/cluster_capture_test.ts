/**
 * Transparent capture on the local cluster, end to end: aether installed by its chart with
 * `transparentCapture=true`, real containerd invoking aether's chained CNI plugin for every pod,
 * the node agent putting each pod's nftables table in place before the ADD returns, the node
 * proxy's capture listener in each pod's netns. Unmodified pods (busybox, Istio's echo client)
 * then reach mesh Services by ClusterIP, `<svc>.<ns>.svc.cluster.local`, `<svc>.<ns>` and
 * `<svc>.aether.internal`, all under the Service's producer route or the caller namespace's
 * consumer route; a raw TCP Service works through the TCP floor; pod IPs, an address outside the
 * mesh and an opted-out pod pass untouched; probes pass; TCPRoutes with the Service as parent split
 * and pin its connections and TLSRoutes route them by SNI (e2e/cluster_capture_l4.ts). A pod created while the node agent is
 * down is refused (ADD fails, kubelet retries) until the agent is back, and its init container's
 * first call is already captured. The agent restarts under captured load with 0 failed requests
 * and the table untouched; a rewrite of the conflist by the primary CNI is healed; `helm
 * uninstall` leaves no table, no conflist entry and no binary, and pods keep networking.
 */
import assert from "node:assert/strict";
import { cniConflist, withCluster } from "../testbed/cluster/mod.ts";
import { uninstallAether } from "../testbed/conformance/mod.ts";
import {
  type CaptureEnv,
  debugCapture,
  installCapture,
  nftIn,
  podPid,
  statSum,
  wgetEcho,
} from "./cluster_capture.ts";
import { releaseNs, waitFor } from "./cluster_ha.ts";
import { agentDownPodCaptured, restartUnderLoad } from "./cluster_capture_lifecycle.ts";
import { meshTcpRoutes } from "./cluster_capture_l4.ts";
import { proxyDeletedUnderLoad, proxyRollUnderLoad } from "./cluster_capture_proxy.ts";

/** The names a client tries for `web`, each on the Service port. */
function webNames(env: CaptureEnv, vip: string): string[] {
  const { app } = env.ns;
  return [
    `http://${vip}:8080/by-ip`,
    `http://web.${app}.svc.cluster.local:8080/by-fqdn`,
    `http://web.${app}:8080/by-short`,
    `http://web.aether.internal:8080/by-mesh-name`,
  ];
}

Deno.test({
  name: "local cluster, transparent capture: unmodified pods in the mesh, end to end",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await withCluster(async (c) => {
      const env = await installCapture(c);
      const { app, consumer } = env.ns;
      try {
        const svc = await env.json(["-n", app, "get", "service", "web"]);
        const vip = svc.spec.clusterIP as string;

        await t.step(
          "every name of a Service obeys the producer and the consumer route",
          async () => {
            for (const url of webNames(env, vip)) {
              const p = await wgetEcho(env, app, "client", url);
              assert.equal(p.headers["x-route"], "producer", `${url} from ${app}`);
              assert.match(p.pod, /^web-(?!v2)/, `${url}: the producer route's backend`);
              const cons = await wgetEcho(env, consumer, "client", url);
              assert.equal(cons.headers["x-route"], "consumer", `${url} from ${consumer}`);
              assert.match(cons.pod, /^web-v2-/, `${url}: the consumer route's backend`);
            }
          },
        );

        await t.step("/debug/capture: each pod's table in place, its listener served", async () => {
          const doc = await debugCapture(c);
          const pod = (ns: string, name: string) =>
            doc.pods.find((p: { key: string }) => p.key === `${ns}/${name}`);
          for (const ns of [app, consumer]) {
            const p = pod(ns, "client");
            assert.ok(p, `${ns}/client among ${doc.pods.map((x: { key: string }) => x.key)}`);
            assert.equal(p.state, "captured", JSON.stringify(p));
            assert.equal(p.listenerServed, true, JSON.stringify(p));
            assert.ok(p.vips > 0 && p.dnsServers === 1, JSON.stringify(p));
          }
          assert.equal(pod(app, "opted-out"), undefined, "the opted-out pod is not captured");
        });

        await t.step(
          "a raw TCP Service through the TCP floor, and a sniffed TCP port",
          async () => {
            const before = await statSum(
              c,
              `^tcp\\.aether_capture_${app.replaceAll("-", "_")}`,
              ".downstream_cx_total",
            );
            for (const port of [9000, 9090]) {
              const out = await env.exec(app, "echo-client", ["client", `tcp://tcp-echo:${port}`]);
              assert.match(out, /\[0 body\] StatusCode=200/, `tcp-echo:${port}: ${out}`);
              assert.match(out, /Hostname=tcp-echo-/);
            }
            const after = await statSum(
              c,
              `^tcp\\.aether_capture_${app.replaceAll("-", "_")}`,
              ".downstream_cx_total",
            );
            assert.ok(
              after - before >= 2,
              `both connections through the capture listener's TCP chains (${before} → ${after})`,
            );
          },
        );

        await t.step(
          "pod IPs, an address outside the mesh and an opted-out pod pass untouched",
          async () => {
            const web = (await env.json(["-n", app, "get", "pods", "-l", "app=web"])).items[0];
            const direct = await wgetEcho(
              env,
              app,
              "client",
              `http://${web.status.podIP}:3000/pod-ip`,
            );
            assert.equal(direct.headers["x-route"], undefined, "a pod IP bypasses the routes");
            assert.equal(direct.pod, web.metadata.name);
            // The API server on the node address is outside the mesh: it answers its own 401/403.
            const outside = await env.exec(app, "client", [
              "sh",
              "-c",
              `printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${c.layout.nodeIp} 6443 | head -c 40; echo`,
            ]);
            assert.match(outside, /^HTTP\/1\.[01] 400/, `the API server answered: ${outside}`);
            const optedOut = await wgetEcho(env, app, "opted-out", `http://${vip}:8080/opted-out`);
            assert.equal(
              optedOut.headers["x-route"],
              undefined,
              "kube-proxy served the opted-out pod",
            );
            const pid = await podPid(env, app, "opted-out");
            assert.doesNotMatch(await nftIn(pid, ["list", "tables"]), /inet aether/);
          },
        );

        await t.step("probes pass with capture on", async () => {
          const pods = (await env.json(["-n", app, "get", "pods", "-l", "app=web"])).items;
          for (const p of pods) {
            assert.equal(p.status.containerStatuses[0].ready, true, p.metadata.name);
            assert.equal(
              p.status.containerStatuses[0].restartCount,
              0,
              `${p.metadata.name} liveness`,
            );
          }
        });

        await t.step(
          "mesh TCPRoute, TLSRoute and UDPRoute: splits, a consumer's pin, SNI routing, their status",
          () => meshTcpRoutes(c, env),
        );

        await t.step(
          "a pod made while the node agent is down waits, then starts captured",
          () => agentDownPodCaptured(c, env, vip),
        );

        await t.step(
          "node agent restart under captured load: 0 failed, the table untouched",
          () => restartUnderLoad(env, vip),
        );

        await t.step(
          "node-proxy DaemonSet rolled under captured load: 0 failed",
          () => proxyRollUnderLoad(c, env, vip),
        );

        await t.step(
          "node-proxy pod deleted under captured load: 0 failed",
          () => proxyDeletedUnderLoad(env, vip),
        );

        await t.step(
          "the primary CNI rewrites its conflist: aether's entry comes back",
          async () => {
            await Deno.writeTextFile(env.conflist, cniConflist(c.layout));
            const healed = Date.now();
            await waitFor(
              "aether-cni back in the conflist",
              async () =>
                (await Deno.readTextFile(env.conflist)).includes('"aether-cni"') ? true : undefined,
              60_000,
            );
            console.log(`conflist healed ${Date.now() - healed} ms after the rewrite`);
          },
        );

        await t.step(
          "uninstall: no table, no conflist entry, no binary; pods keep networking",
          async () => {
            const pids = [await podPid(env, app, "client"), await podPid(env, consumer, "client")];
            await uninstallAether(c.kubeconfig);
            for (const pid of pids) {
              assert.doesNotMatch(
                await nftIn(pid, ["list", "tables"]),
                /inet aether/,
                `pid ${pid}`,
              );
            }
            assert.doesNotMatch(await Deno.readTextFile(env.conflist), /aether-cni/);
            const bins = [];
            for await (const e of Deno.readDir(env.cniBinDir)) bins.push(e.name);
            assert.ok(!bins.some((b) => b.startsWith("aether")), `bin folder: ${bins}`);
            const plain = await wgetEcho(env, app, "client", `http://${vip}:8080/after-uninstall`);
            assert.equal(plain.headers["x-route"], undefined, "kube-proxy now");
            const left = await env.k(["-n", releaseNs, "get", "pods", "-o", "name"]).catch(() =>
              ""
            );
            assert.equal(left.trim(), "", "the release's pods are gone");
          },
        );
      } finally {
        await env.cleanup();
      }
    });
  },
});
