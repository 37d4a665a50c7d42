import assert from "node:assert/strict";
import { ensurePeer } from "../../../../lib/peers/mod.ts";
import { envoyValidate } from "../test_util.ts";
import { translateNode } from "./mod.ts";
import { nodeGoldenCases, nodeStaticBootstrap } from "./test_util.ts";

Deno.test("real Envoy 1.40 accepts every node golden case (envoy --mode validate)", async () => {
  const envoy = await ensurePeer("envoy");
  const cases = nodeGoldenCases();
  const results = await Promise.allSettled(
    cases.map(({ mesh, view, options }) =>
      envoyValidate(envoy, nodeStaticBootstrap(translateNode(mesh, view, options)))
    ),
  );
  const failures = results.flatMap((r, i) =>
    r.status === "rejected" ? [`${cases[i].name}: ${(r.reason as Error).message}`] : []
  );
  assert.deepEqual(failures, []);
});

type Obj = Record<string, unknown>;

Deno.test("envoy --mode validate checks the on_demand per-route config (negative control)", async () => {
  const envoy = await ensurePeer("envoy");
  const demo = nodeGoldenCases().find((c) => c.name === "demo")!;
  const r = translateNode(demo.mesh, demo.view);
  const bootstrap = nodeStaticBootstrap(r);
  const listeners = (bootstrap.static_resources as { listeners: Obj[] }).listeners;
  const hcm = ((listeners[0].filter_chains as Obj[])[0].filters as Obj[])[0].typed_config as {
    route_config: { virtual_hosts: { name: string; routes: Obj[] }[] };
  };
  const cold = hcm.route_config.virtual_hosts.find((v) => v.name === "cold")!;
  const perRoute = (cold.routes[0].typed_per_filter_config as Record<string, Obj>)[
    "envoy.filters.http.on_demand"
  ];
  // OnDemandCds.source is required: Envoy must refuse an odcds without it.
  (perRoute.odcds as Obj).source = undefined;
  delete (perRoute.odcds as Obj).source;
  await assert.rejects(envoyValidate(envoy, bootstrap), /source|validation|OnDemandCds/i);
});
