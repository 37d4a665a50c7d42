/**
 * A valid routes file made invalid (a half-written save) keeps serving its routes: 0 non-2xx
 * under load while it is broken, `/status` names the file as stale with the parse error, and the
 * fixed file applies again.
 */
import assert from "node:assert/strict";
import { Logger } from "../lib/log/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { runStandalone, standaloneDefaults } from "../agent/edge/mod.ts";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  serviceFor,
  startEchos,
  toYaml,
  waitFor,
} from "./harness.ts";
import { request } from "./http_client.ts";
import { startLoad } from "./load.ts";

Deno.test("edge: a routes file that stops parsing keeps serving its routes and is stale on /status", async () => {
  const echos = await startEchos("app");
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-stale-" });
  const route = (name: string) =>
    httpRoute(name, {
      parentRefs: [{ name: "gw" }],
      hostnames: [`${name}.example.com`],
      rules: [{ backendRefs: [{ name: "app", port: 8080 }] }],
    });
  await Deno.writeTextFile(
    `${dir}/base.yaml`,
    toYaml(
      gatewayClass(),
      gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
      ...serviceFor("app", echos.app),
    ),
  );
  const routes = toYaml(route("one"), route("two"));
  await Deno.writeTextFile(`${dir}/routes.yaml`, routes);
  const agent = await runStandalone({
    ...standaloneDefaults,
    envoy: await ensurePeer("envoy"),
    config: dir,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    nodeId: `e2e-stale-${crypto.randomUUID().slice(0, 8)}`,
    logger: new Logger("agent", () => {}, "error"),
  });
  const status = async () => await (await fetch(`http://${agent.admin.address}/status`)).json();
  let load: ReturnType<typeof startLoad> | undefined;
  try {
    await agent.waitReady(60000);
    for (const h of ["one", "two"]) {
      await waitFor(
        `${h} serves`,
        async () =>
          (await request({ port, authority: `${h}.example.com` }).catch(() => null))?.status ===
            200,
      );
    }
    load = startLoad({ port, authorities: ["one.example.com", "two.example.com"] });
    // Counted requests, not fixed sleeps: the load has answers before the file breaks, and
    // again while it is broken, however slow the machine is.
    await waitFor("the load runs", () => load!.sent() >= 50, 60000);
    // Half-written: cut in the middle of the second route.
    await Deno.writeTextFile(`${dir}/routes.yaml`, routes.slice(0, routes.length - 40));
    await waitFor("routes.yaml is stale on /status", async () => {
      const s = await status();
      return s.staleFiles?.some((f: { source: string }) => f.source.endsWith("routes.yaml"));
    }, 60000);
    const sentWhenStale = load.sent();
    await waitFor(
      "100 requests while the file is broken",
      () => load!.sent() >= sentWhenStale + 100,
      60000,
    );
    const result = await load.stop();
    load = undefined;
    assert.equal(result.failed, 0, `non-2xx while the file was broken: ${[...result.failures]}`);
    assert.ok(result.sent - sentWhenStale >= 100, `load ran (${result.sent} requests)`);
    const s = await status();
    const stale = s.staleFiles.find((f: { source: string }) => f.source.endsWith("routes.yaml"));
    assert.match(stale.reason, /invalid YAML/);
    assert.ok(
      s.config.problems.some((p: { source?: string; message: string }) =>
        p.source?.endsWith("routes.yaml") && /stale/.test(p.message)
      ),
    );
    // Fixed (route two dropped on purpose): applies, not stale any more.
    await Deno.writeTextFile(`${dir}/routes.yaml`, toYaml(route("one")));
    await waitFor(
      "route two is gone",
      async () =>
        (await request({ port, authority: "two.example.com" }).catch(() => null))?.status === 404,
      60000,
    );
    assert.deepEqual((await status()).staleFiles, []);
    assert.equal((await request({ port, authority: "one.example.com" })).status, 200);
  } finally {
    await load?.stop();
    await agent.close();
    await closeEchos(echos);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
