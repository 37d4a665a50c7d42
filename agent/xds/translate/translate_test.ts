import assert from "node:assert/strict";
import { join } from "node:path";
import { ForwardClientCert } from "./enums.ts";
import { translate, translateEndpoints, TranslateMemo } from "./mod.ts";
import { goldenCases, testdataDir, toYaml } from "./_test_utils.ts";
import { checkGolden, orphanedOutputs } from "../../../testbed/golden.ts";

Deno.test("translate golden files (UPDATE_GOLDEN=1 regenerates)", () => {
  const cases = goldenCases();
  assert.ok(cases.length >= 10, "golden cases present");
  for (const { name, ir } of cases) {
    checkGolden(
      join(testdataDir, `${name}.out.yaml`),
      toYaml(translate(ir), false),
      "deno test -A agent/xds/translate",
    );
  }
});

Deno.test("translate golden: no output without its input (UPDATE_GOLDEN=1 deletes them)", () => {
  assert.deepEqual(orphanedOutputs(testdataDir), []);
});

Deno.test("translate is deterministic and never reorders", () => {
  for (const { name, ir } of goldenCases()) {
    const a = translate(ir);
    const b = translate(structuredClone(ir));
    assert.deepEqual(a, b, name);
    assert.equal(toYaml(a), toYaml(b), name);
    for (const list of Object.values(a)) {
      const names = list.map((r: { name: string }) => r.name);
      assert.deepEqual(names, [...names].sort(), `${name}: sorted by name`);
    }
    // The input is not mutated.
    assert.deepEqual(ir, structuredClone(ir));
  }
});

Deno.test("translateEndpoints equals the endpoints of a full translate", () => {
  for (const { name, ir } of goldenCases()) {
    assert.deepEqual(translateEndpoints(ir.clusters), translate(ir).endpoints, name);
  }
});

Deno.test("every IR virtual host is one VHDS VirtualHost <rc>/<name>, routes in IR order", () => {
  for (const { name, ir } of goldenCases()) {
    const r = translate(ir);
    const hosts = new Map((r.virtualHosts ?? []).map((v) => [v.name, v.resource]));
    const chains = ir.listeners.flatMap((l) =>
      l.filterChains.flatMap((c) => c.kind === "http" ? [c] : [])
    );
    const want = new Set(
      chains.flatMap((c) => c.virtualHosts.map((v) => `${c.routeConfigName}/${v.name}`)),
    );
    assert.deepEqual([...hosts.keys()].sort(), [...want].sort(), name);
    for (const chain of chains) {
      const rc = r.routes.find((x) => x.name === chain.routeConfigName)!.resource;
      assert.equal(rc.virtual_hosts, undefined, `${name}: no inline virtual host`);
      assert.ok(rc.vhds, `${name}: VHDS on`);
      for (const v of chain.virtualHosts) {
        const got = hosts.get(`${chain.routeConfigName}/${v.name}`) as {
          name: string;
          domains: string[];
          routes: { name: string }[];
        };
        assert.equal(got.name, `${chain.routeConfigName}/${v.name}`);
        assert.deepEqual(got.domains, v.domains);
        assert.deepEqual(got.routes.map((x) => x.name), v.routes.map((x) => x.name));
      }
    }
  }
});

Deno.test("edge options: sanitizing is on by default and off for the mesh", () => {
  const ir = goldenCases().find((c) => c.name === "matches")!.ir;
  const hcm = (opts: { edge?: boolean }) => {
    const l = translate(ir, opts).listeners[0].resource as {
      filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[];
    };
    return l.filter_chains[0].filters[0].typed_config;
  };
  assert.equal(hcm({}).forward_client_cert_details, ForwardClientCert.SANITIZE);
  assert.deepEqual(hcm({}).use_remote_address, { value: true });
  assert.equal(hcm({ edge: false }).forward_client_cert_details, undefined);
  assert.ok(
    (translate(ir).routes[0].resource.request_headers_to_remove as string[]).length > 0,
  );
  assert.equal(
    translate(ir, { edge: false }).routes[0].resource.request_headers_to_remove,
    undefined,
  );
});

Deno.test("translate: a virtual host seen before is reused, not translated again", () => {
  for (const { name, ir } of goldenCases()) {
    const memo = new TranslateMemo();
    const a = translate(ir, {}, memo);
    const b = translate(ir, {}, memo);
    assert.equal(toYaml(b), toYaml(a), name);
    (a.virtualHosts ?? []).forEach((vh, i) => assert.equal(b.virtualHosts![i], vh, name));
  }
});
