import assert from "node:assert/strict";
import { ensurePeer } from "../../../lib/peers/mod.ts";
import { newerFields } from "../proto.ts";
import { translate } from "./mod.ts";
import { envoyValidate, goldenCases, staticBootstrap } from "./test_util.ts";

Deno.test("real Envoy 1.40 accepts every golden case (envoy --mode validate)", async () => {
  const envoy = await ensurePeer("envoy");
  const cases = goldenCases();
  const results = await Promise.allSettled(
    cases.map(({ ir }) => envoyValidate(envoy, staticBootstrap(translate(ir)))),
  );
  const failures = results.flatMap((r, i) =>
    r.status === "rejected" ? [`${cases[i].name}: ${(r.reason as Error).message}`] : []
  );
  assert.deepEqual(failures, []);
});

Deno.test("real Envoy 1.40 accepts SocketAddress.network_namespace_filepath (newerFields)", async () => {
  assert.ok(newerFields.some((f) => f.name === "network_namespace_filepath"));
  const envoy = await ensurePeer("envoy");
  const ir = goldenCases().find((c) => c.name === "matches")!.ir;
  const bootstrap = staticBootstrap(translate(ir));
  const listeners = (bootstrap.static_resources as { listeners: Record<string, unknown>[] })
    .listeners;
  const address = listeners[0].address as { socket_address: Record<string, unknown> };
  address.socket_address.network_namespace_filepath = "/proc/self/ns/net";
  await envoyValidate(envoy, bootstrap);
});
