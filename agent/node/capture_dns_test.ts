import assert from "node:assert/strict";
import { captureDnsRedirect } from "./capture_dns.ts";

Deno.test("--capture-dns: IPs are servers, <namespace>/<name> names a Service, the rest is refused", () => {
  assert.deepEqual(captureDnsRedirect({ dnsAddress: "192.0.2.1:18054" }), {});
  assert.deepEqual(
    captureDnsRedirect({ captureDns: ["10.96.0.10"], dnsAddress: "none" }),
    {},
    "no responder: pods' DNS untouched",
  );
  assert.deepEqual(
    captureDnsRedirect({
      captureDns: ["10.96.0.10", "kube-system/kube-dns"],
      dnsAddress: "192.0.2.1:18054",
    }),
    {
      dns: { servers: ["10.96.0.10"], addresses: ["192.0.2.1"], port: 18054 },
      dnsServices: ["kube-system/kube-dns"],
    },
  );
  assert.throws(
    () => captureDnsRedirect({ captureDns: ["kube-dns"], dnsAddress: "192.0.2.1:18054" }),
    /want a cluster DNS server IP or its Service as <namespace>\/<name>/,
  );
  assert.throws(
    () => captureDnsRedirect({ captureDns: ["10.96.0.10"], dnsAddress: "127.0.0.1:18054" }),
    /a pod cannot reach the node's loopback/,
  );
});
