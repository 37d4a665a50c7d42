/**
 * glibc's stub resolver resolves a mesh name. glibc always asks port 53, so the test makes a
 * network namespace (loopback only), writes /etc/netns/<ns>/resolv.conf (`ip netns exec` bind-mounts
 * it over /etc/resolv.conf) pointing at 127.0.0.1, and runs the responder (tools/dns_responder.ts) inside
 * that namespace on 127.0.0.1:53. No DNAT is needed and nothing leaves the namespace; both the
 * namespace and its /etc/netns folder are removed afterwards. In a cluster the CNI's DNAT of :53 →
 * HOST_IP:18054 plays the part of the port. getaddrinfo's AI_ADDRCONFIG ignores loopback, so the
 * namespace also gets one end of a veth pair with 192.0.2.1/24 (TEST-NET-1, unrouted; the host end
 * has no address); without it `getent ahosts*` would not even send a query.
 */
import assert from "node:assert/strict";
import { createDnsNetns } from "./_netns_test_utils.ts";

Deno.test("glibc (getent) in a network namespace resolves a mesh name", async () => {
  const netns = await createDnsNetns(
    "aether-dns",
    "nameserver 127.0.0.1\nsearch ns.svc.cluster.local\noptions ndots:1 timeout:1 attempts:2\n",
  );
  const veth = `adns${netns.name.slice(-8)}`;
  try {
    for (
      const args of [
        ["link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns.name],
        ["-n", netns.name, "addr", "add", "192.0.2.1/24", "dev", "eth0"],
        ["-n", netns.name, "link", "set", "eth0", "up"],
        ["link", "set", veth, "up"],
      ]
    ) {
      const r = await netns.ip(args);
      assert.ok(r.ok, `ip ${args.join(" ")}: ${r.out}`);
    }
    const banner = await netns.startResponder([
      "--dns-address",
      "127.0.0.1:53",
      "--mesh-domain",
      "mesh.internal",
      "--record",
      "web=10.96.0.10,fd00::10",
      "--record",
      "v4only=10.96.0.11",
      "--upstream",
      "127.0.0.1:5399",
    ]);
    assert.match(banner, /listening 127\.0\.0\.1 53/);

    const getent = (...args: string[]) => netns.exec("getent", args);
    const v4 = await getent("ahostsv4", "web.mesh.internal");
    assert.ok(v4.ok, v4.out);
    assert.match(v4.out, /^10\.96\.0\.10\s+STREAM web\.mesh\.internal/m);
    const hosts = await getent("hosts", "web.mesh.internal");
    assert.ok(hosts.ok, hosts.out);
    assert.match(hosts.out, /^(fd00::10|10\.96\.0\.10)\s+web\.mesh\.internal/m);
    // A name with only an IPv4 VIP: AAAA is NODATA, so glibc falls back to A.
    const v4only = await getent("hosts", "v4only.mesh.internal");
    assert.ok(v4only.ok, v4only.out);
    assert.match(v4only.out, /^10\.96\.0\.11\s+v4only\.mesh\.internal/m);
    const missing = await getent("hosts", "nope.mesh.internal");
    assert.equal(missing.ok, false, "NXDOMAIN → getent exit 2");
  } finally {
    await netns.ip(["link", "del", veth]);
    await netns.remove();
  }
});
