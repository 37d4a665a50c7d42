import assert from "node:assert/strict";
import { clusterSetEndpoints } from "./clusterset_endpoints.ts";

const rec = (cluster: string, ip: string, service = "web") =>
  JSON.stringify({
    cluster,
    namespace: "shop",
    service,
    pod: `p-${ip}`,
    ip,
    ports: [{ name: "http", protocol: "TCP", port: 8080 }],
    spiffeId: `spiffe://${cluster}/ns/shop/sa/${service}`,
  });

Deno.test("clusterset endpoints: per service, own cluster at priority 0, others 1, garbage skipped", () => {
  const { byService, skipped } = clusterSetEndpoints(
    [
      rec("b.eu", "10.2.0.1"),
      rec("a.eu", "10.1.0.2"),
      rec("a.eu", "10.1.0.1"),
      "{",
      rec("b.eu", "10.2.0.9", "db"),
    ],
    "a.eu",
  );
  assert.equal(skipped, 1);
  assert.deepEqual([...byService.keys()].sort(), ["shop/db", "shop/web"]);
  assert.deepEqual(
    byService.get("shop/web")!.map((e) => [e.cluster, e.address, e.priority, e.identity]),
    [
      ["a.eu", "10.1.0.1", 0, "spiffe://a.eu/ns/shop/sa/web"],
      ["a.eu", "10.1.0.2", 0, "spiffe://a.eu/ns/shop/sa/web"],
      ["b.eu", "10.2.0.1", 1, "spiffe://b.eu/ns/shop/sa/web"],
    ],
  );
});
