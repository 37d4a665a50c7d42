/**
 * Transparent capture on real Envoy 1.40, no identity: client pods (namespaces a and b) whose
 * nftables rules redirect the scenario's VIP:ports (and one pod IP) to the capture listener
 * `127.0.0.1:15001` in their netns; backends in pods of their own. Proves: HTTP by VIP obeys the
 * producer routes, and a's consumer route; the dialled VIP picks the routes, not the Host header
 * (MeshFrontendHostname), for an IPv6 VIP too ([::1]:15001); gRPC (appProtocol grpc, and sniffed on a port without one) and sniffed
 * HTTP/1.1 are split per request on one connection, sniffed h2c is HTTP too; raw TCP on a tcp
 * port and on a sniffed port; a server that speaks first on a tcp port answers although the
 * detection timeout is a minute (no inspector runs there); a redirected pod IP passes through to
 * that pod without its routes; every service but echo starts cold and its first request or
 * connection succeeds (on-demand CDS).
 */
import assert from "node:assert/strict";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { configDump } from "../xds/server/_test_utils.ts";
import type { NetPod } from "../../e2e/netns.ts";
import { type CaptureRig, startCaptureRig } from "./_capture_test_utils.ts";
import {
  D,
  SCENARIO_BACKENDS,
  scenarioMesh,
  scenarioRedirect,
  VIP,
  VIP6_ECHO_V1,
} from "./_capture_scenario_test_utils.ts";

/** Requests with curl inside `pod`; each as `<status> <x-route or -> <body>`. */
async function curl(rig: CaptureRig, pod: NetPod, url: string, extra: string[] = []) {
  const out = await rig.inPod(pod, await ensurePeer("curl"), [
    ...["-sS", "--max-time", "15", ...extra, url],
    ...["-w", "\\n@@ %{http_code} %header{x-route} %{num_connects} %{time_total}\\n"],
  ]);
  const done = /([^]*?)\n@@ (\d+) (\S*) (\d+) ([\d.]+)\n/g;
  return [...out.matchAll(done)].map(([, body, code, mark, n, secs]) => ({
    line: `${code} ${mark || "-"} ${body.trim()}`,
    connects: Number(n),
    ms: Math.round(Number(secs) * 1000),
  }));
}

function count(lines: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) out[l] = (out[l] ?? 0) + 1;
  return out;
}

async function dumpedClusters(adminUrl: string): Promise<string[]> {
  const configs = (await configDump(adminUrl)).configs as Record<string, unknown>[];
  const cds = configs.find((c) => String(c["@type"]).endsWith("ClustersConfigDump"))!;
  const active = (cds.dynamic_active_clusters ?? []) as { cluster: { name: string } }[];
  return active.map((c) => c.cluster.name).sort();
}

Deno.test({
  name: "capture on real Envoy: routes by dialled VIP, per-request splits, TCP, pass-through, cold",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const rig = await startCaptureRig({
      backends: SCENARIO_BACKENDS,
      mesh: scenarioMesh,
      dependencies: [`echo.${D}`],
      redirect: scenarioRedirect,
      detectionTimeoutMs: 60_000,
    });
    const { clientA: a, clientB: b } = rig;
    const one = async (pod: NetPod, url: string, extra: string[] = []) =>
      (await curl(rig, pod, url, extra))[0].line;
    try {
      assert.equal(rig.server.lastNack("node-1"), undefined);
      // Cold: only echo's set (echo and its backends) and the pass-through cluster.
      assert.deepEqual(await dumpedClusters(rig.adminUrl), [
        "capture-passthrough",
        `echo-v1.${D}`,
        `echo-v2.${D}`,
        `echo.${D}`,
      ]);

      // Producer routes from b, a's consumer route from a: by the VIP, whatever the Host.
      assert.equal(await one(b, `http://${VIP.echo}/x`), "200 - backend v1 /x");
      assert.equal(await one(b, `http://${VIP.echo}/v2/x`), "200 - backend v2 /v2/x");
      assert.equal(await one(a, `http://${VIP.echo}/x`), "200 - backend v2 /x");
      // MeshFrontendHostname: echo-v2's VIP with Host echo-v1 gets echo-v2's route, and back.
      const host = (h: string) => ["-H", `Host: ${h}`];
      assert.equal(
        await one(b, `http://${VIP["echo-v2"]}/f`, host("echo-v1")),
        "200 echo-v2 backend v2 /f",
      );
      assert.equal(
        await one(b, `http://${VIP["echo-v1"]}/f`, host("echo-v2")),
        "200 - backend v1 /f",
      );
      // Dual stack: echo-v1's IPv6 VIP is captured at [::1]:15001 and routed the same way.
      assert.equal(await one(a, `http://[${VIP6_ECHO_V1}]/6`, ["-g"]), "200 - backend v1 /6");

      // A cold service: the first request is routed by its route (x-route) and succeeds.
      const [cold] = await curl(rig, a, `http://${VIP.cold}/c`);
      assert.equal(cold.line, "200 cold backend cold /c");
      const [warm] = await curl(rig, a, `http://${VIP.cold}/c`);
      console.log(`cold service: first request ${cold.ms} ms, second ${warm.ms} ms (curl total)`);
      // A cold TCP service: its first connection waits for its cluster and gets through.
      assert.equal(
        (await rig.probe(b, ["tcp", VIP["cold-tcp"], "6000", "first"])).trim(),
        "cold: first",
      );

      // gRPC, declared (appProtocol grpc) and sniffed (h2c preface): 100 calls on one channel,
      // split 50/50 per call.
      const cx = "listener.aether_capture_b_client_b.downstream_cx_total";
      const h2 = "http_inspector.http2_found";
      for (const [vip, port] of [[VIP.grpc, 7070], [VIP["sniff-grpc"], 7071]] as const) {
        const [cx0, h20] = [await rig.stat(cx), await rig.stat(h2)];
        const got = JSON.parse(await rig.probe(b, ["grpc", `${vip}:${port}`, "grpc", "100"]));
        assert.equal(await rig.stat(cx) - cx0, 1, `${port}: one connection`);
        assert.equal(await rig.stat(h2) - h20, port === 7071 ? 1 : 0, `${port}: sniffed or not`);
        assert.equal(got.v1 + got.v2, 100, JSON.stringify(got));
        assert.ok(got.v1 >= 20 && got.v2 >= 20, `${port}: both backends (${JSON.stringify(got)})`);
      }

      // Sniffed port (no appProtocol): HTTP/1.1 split per request on one connection, and h2c.
      const before = await rig.stat(cx);
      const got = await curl(rig, b, `http://${VIP.sniff}:8000/s?i=[1-60]`);
      assert.equal(got.reduce((n, r) => n + r.connects, 0), 1, "one connection");
      assert.equal(await rig.stat(cx) - before, 1, "one capture connection");
      const by = count(got.map((r) => r.line));
      const [v1, v2] = [by["200 - backend v1 /s"] ?? 0, by["200 - backend v2 /s"] ?? 0];
      assert.equal(v1 + v2, 60, JSON.stringify(by));
      assert.ok(v1 >= 10 && v2 >= 10, `both backends (${JSON.stringify(by)})`);
      const h20 = await rig.stat(h2);
      assert.match(
        await one(b, `http://${VIP.sniff}:8000/h`, ["--http2-prior-knowledge"]),
        /^200 - backend v[12] \/h$/,
      );
      assert.equal(await rig.stat(h2) - h20, 1, "h2c detected");

      // Raw TCP: a tcp port, and bytes that are not HTTP on a sniffed port.
      assert.equal((await rig.probe(a, ["tcp", VIP.tcp, "6000", "ping"])).trim(), "v1: ping");
      assert.equal(
        (await rig.probe(b, ["tcp", VIP["sniff-tcp"], "7000", "pong"])).trim(),
        "v1: pong",
      );
      // Server first on a tcp port: no inspector waits for the client (timeout 60 s, probe 20 s).
      const sniffs = await rig.stat("http_inspector.http_not_found");
      assert.equal((await rig.probe(a, ["greet", VIP.greet, "6001"])).trim(), "hello from v1");
      assert.equal(await rig.stat("http_inspector.http_not_found"), sniffs, "not inspected");

      // A redirected pod IP (v2's) passes through to that pod: no echo-v2 route on the way.
      const passthrough = "cluster.capture-passthrough.upstream_cx_total";
      const through = await rig.stat(passthrough);
      assert.equal(await one(b, `http://${rig.pods.ips.v2}:8080/p`), "200 - backend v2 /p");
      assert.equal(await rig.stat(passthrough) - through, 1, "through the pass-through cluster");
      // A pod IP that is not redirected never sees the proxy.
      assert.equal(await one(b, `http://${rig.pods.ips.v1}:8080/p`), "200 - backend v1 /p");

      // Everything that was cold came over on-demand CDS, never failing its first use.
      for (const name of ["cold", "cold-tcp", "grpc-v1", "grpc-v2", "sniff-v1", "tcp", "greet"]) {
        assert.ok(rig.asked.includes(`${name}.${D}`), `${name} on demand (${rig.asked})`);
      }
      assert.equal(rig.server.lastNack("node-1"), undefined);
      // No work-in-progress proto in the config (Envoy warns once per use, at every update).
      assert.ok(!rig.envoyLogs().includes("work-in-progress"), "no work-in-progress warning");
    } catch (e) {
      throw new Error(`${(e as Error).message}\nenvoy log:\n${rig.envoyLogs()}`);
    } finally {
      await rig.close();
    }
  },
});
