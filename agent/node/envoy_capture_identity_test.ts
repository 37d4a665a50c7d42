/**
 * Transparent capture with SPIFFE identity from real SPIRE, on real Envoy 1.40: the scenario of
 * envoy_capture_test.ts with every pod holding an SVID, so every hop to a backend is mTLS at its
 * pod's `:15008` — HTTP to the inbound connection manager (the backend sees the caller's ID in
 * XFCC), TCP over the floor: ALPN `aether-tcp` picks the inbound raw-TCP chain, which hands the
 * bytes to the target port. Run twice: with the internal-listener extension (same-node hops
 * through the internal inbound listeners, which pick the raw-TCP chain by ALPN too) and from a
 * bootstrap without it (loopback TCP to `podIP:15008`).
 */
import assert from "node:assert/strict";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { startSpire } from "../../e2e/spire.ts";
import type { NetPod } from "../../e2e/netns.ts";
import { type CaptureRig, startCaptureRig } from "./_capture_test_utils.ts";
import {
  D,
  SCENARIO_BACKENDS,
  scenarioMesh,
  scenarioRedirect,
  VIP,
} from "./_capture_scenario_test_utils.ts";

async function curl(rig: CaptureRig, pod: NetPod, url: string, extra: string[] = []) {
  const out = await rig.inPod(pod, await ensurePeer("curl"), [
    ...["-sS", "--max-time", "15", ...extra, url, "-w", "\\n%{http_code} %header{x-route}"],
  ]);
  const lines = out.trim().split("\n");
  const [code, mark] = lines.pop()!.split(" ");
  return `${code} ${mark || "-"} ${lines.join("\n")}`;
}

Deno.test({
  name: "capture with SPIRE identity: HTTP over mTLS by VIP, the TCP-over-mTLS floor, pass-through",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const spire = await startSpire();
    const client = (ns: string) => `spiffe://${spire.trustDomain}/ns/${ns}/sa/client`;
    try {
      for (const older of [false, true]) {
        const rig = await startCaptureRig({
          backends: SCENARIO_BACKENDS,
          mesh: scenarioMesh,
          dependencies: [`echo.${D}`],
          redirect: scenarioRedirect,
          detectionTimeoutMs: 60_000,
          spire,
          older,
        });
        const { clientA: a, clientB: b } = rig;
        const how = older ? "over podIP:15008" : "through internal listeners";
        try {
          assert.equal(rig.server.lastNack("node-1"), undefined, how);
          // HTTP by VIP: producer routes for b, a's consumer route; mTLS all the way (XFCC).
          assert.equal(
            await curl(rig, b, `http://${VIP.echo}/x`),
            `200 - backend v1 /x from ${client("b")}`,
            how,
          );
          assert.equal(
            await curl(rig, a, `http://${VIP.echo}/x`),
            `200 - backend v2 /x from ${client("a")}`,
            how,
          );
          assert.equal(
            await curl(rig, b, `http://${VIP["echo-v2"]}/f`, ["-H", "Host: echo-v1"]),
            `200 echo-v2 backend v2 /f from ${client("b")}`,
            how,
          );
          // A cold service's first request: its route, over mTLS.
          assert.equal(
            await curl(rig, a, `http://${VIP.cold}/c`),
            `200 cold backend cold /c from ${client("a")}`,
            how,
          );
          // gRPC split per call on one connection, over mTLS.
          const grpc = JSON.parse(await rig.probe(b, ["grpc", `${VIP.grpc}:7070`, "grpc", "60"]));
          assert.ok(grpc.v1 >= 10 && grpc.v2 >= 10, `${how}: ${JSON.stringify(grpc)}`);

          // The TCP floor: each connection reaches the backend pod's inbound raw-TCP chain.
          const floor = (pod: string) => `tcp.aether_inbound_mesh_${pod}.downstream_cx_total`;
          const [v1, cold] = [await rig.stat(floor("v1")), await rig.stat(floor("cold"))];
          assert.equal((await rig.probe(a, ["tcp", VIP.tcp, "6000", "ping"])).trim(), "v1: ping");
          assert.equal(
            (await rig.probe(b, ["tcp", VIP["sniff-tcp"], "7000", "pong"])).trim(),
            "v1: pong",
          );
          assert.equal(
            (await rig.probe(a, ["greet", VIP.greet, "6001"])).trim(),
            "hello from v1",
            `${how}: a server-first protocol answers at once`,
          );
          assert.equal(await rig.stat(floor("v1")) - v1, 3, `${how}: three floor connections`);
          assert.equal(
            (await rig.probe(b, ["tcp", VIP["cold-tcp"], "6000", "first"])).trim(),
            "cold: first",
          );
          assert.equal(await rig.stat(floor("cold")) - cold, 1, `${how}: cold, over the floor`);

          // A redirected pod IP still passes through (to the app port, no route, no mTLS).
          assert.equal(
            await curl(rig, b, `http://${rig.pods.ips.v2}:8080/p`),
            "200 - backend v2 /p",
            how,
          );
          assert.equal(rig.server.lastNack("node-1"), undefined, how);
        } catch (e) {
          throw new Error(`${(e as Error).message}\nenvoy log:\n${rig.envoyLogs()}`);
        } finally {
          await rig.close();
        }
      }
    } finally {
      await spire.stop();
    }
  },
});
