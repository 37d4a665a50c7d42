import assert from "node:assert/strict";
import type { KubeClient } from "../../lib/kube/mod.ts";
import { exportRecord, isInvalidExport, mergeExports } from "../../lib/mcs/mod.ts";
import type { PlannedImport } from "./plan.ts";
import { McsWriter, unconfiguredFamilies } from "./writes.ts";

// deno-lint-ignore no-explicit-any
type Obj = any;

/** The import of `shop/web` exported with `ipFamilies`, its VIP Service `web-vip`. */
function planned(ipFamilies: string[]): PlannedImport {
  const r = exportRecord("a.eu", {
    metadata: { namespace: "shop", name: "web", creationTimestamp: "2026-12-05T10:00:00Z" },
  }, {
    metadata: { namespace: "shop", name: "web" },
    spec: { clusterIP: "10.96.0.9", ipFamilies, ports: [{ protocol: "TCP", port: 80 }] },
  });
  assert.ok(!isInvalidExport(r));
  return { namespace: "shop", name: "web", merged: mergeExports([r]), vipService: "web-vip" };
}

/**
 * An API server for Services whose cluster serves `served` only: a family it does not serve is
 * refused as kube-apiserver 1.37 refuses it (422, `spec.ipFamilies[i]` not configured); the
 * bodies sent are kept in `sent`.
 */
function fakeServer(served: string[]) {
  const sent: Obj[] = [];
  const ip: Record<string, string> = { IPv4: "10.96.0.7", IPv6: "fd00::7" };
  const client = {
    request: (_method: string, path: string, body: Obj) => {
      sent.push(body);
      if (path.includes("/serviceimports/")) return Promise.resolve({ status: 200, json: body });
      const families: string[] = body.spec.ipFamilies;
      const causes = families.flatMap((f, i) =>
        served.includes(f) ? [] : [{
          reason: "FieldValueInvalid",
          message: `Invalid value: "${f}": not configured on this cluster`,
          field: `spec.ipFamilies[${i}]`,
        }]
      );
      if (causes.length) {
        return Promise.resolve({
          status: 422,
          json: { kind: "Status", reason: "Invalid", message: "invalid", details: { causes } },
        });
      }
      return Promise.resolve({
        status: 200,
        json: { ...body, spec: { ...body.spec, clusterIPs: families.map((f) => ip[f]) } },
      });
    },
  };
  return { client: client as unknown as KubeClient, sent };
}

Deno.test("mcs writes: a dual-stack VIP in both families, in the import's order", async () => {
  const { client, sent } = fakeServer(["IPv4", "IPv6"]);
  const vip = await new McsWriter(client).applyVipService(planned(["IPv6", "IPv4"]));
  assert.deepEqual(vip, { ips: ["fd00::7", "10.96.0.7"], ipFamilies: ["IPv6", "IPv4"] });
  assert.equal(sent[0].spec.ipFamilyPolicy, "PreferDualStack");
});

Deno.test("mcs writes: a single-stack cluster imports a dual-stack export in its family", async () => {
  const { client, sent } = fakeServer(["IPv4"]);
  const w = new McsWriter(client);
  const imp = planned(["IPv6", "IPv4"]);
  const vip = await w.applyVipService(imp);
  assert.deepEqual(vip, { ips: ["10.96.0.7"], ipFamilies: ["IPv4"] });
  assert.deepEqual(sent.map((b) => [b.spec.ipFamilyPolicy, b.spec.ipFamilies]), [
    ["PreferDualStack", ["IPv6", "IPv4"]],
    ["SingleStack", ["IPv4"]],
  ]);
  // The refused family is remembered: the next apply is the accepted one, so nothing is sent.
  assert.deepEqual(await w.applyVipService(imp, vip), vip);
  assert.equal(sent.length, 2);
  // The ServiceImport's IP families are its VIP's: ips[i] is of ipFamilies[i].
  await w.applyImport(imp, vip, []);
  assert.deepEqual(
    [sent[2].spec.ips, sent[2].spec.ipFamilies],
    [["10.96.0.7"], ["IPv4"]],
  );
});

Deno.test("mcs writes: no family served: no VIP, an import without IPs", async () => {
  const { client, sent } = fakeServer(["IPv4"]);
  const w = new McsWriter(client);
  const imp = planned(["IPv6"]);
  assert.equal(await w.applyVipService(imp), undefined);
  assert.equal(sent.length, 1);
  await w.applyImport(imp, undefined, []);
  assert.deepEqual([sent[1].spec.ips, sent[1].spec.ipFamilies], [[], ["IPv6"]]);
});

Deno.test("mcs writes: another refusal of the VIP Service is an error", async () => {
  const client = {
    request: () =>
      Promise.resolve({
        status: 422,
        json: {
          message: "primary family may not change",
          details: { causes: [{ field: "spec.ipFamilies[0]", message: "may not change" }] },
        },
      }),
  } as unknown as KubeClient;
  await assert.rejects(new McsWriter(client).applyVipService(planned(["IPv4"])), /HTTP 422/);
  assert.deepEqual(
    unconfiguredFamilies({
      details: {
        causes: [{ field: "spec.ipFamilies[1]", message: "not configured on this cluster" }],
      },
    }, ["IPv4", "IPv6"]),
    ["IPv6"],
  );
});
