/**
 * The loop guard excludes only the responder itself: with resolv.conf naming 127.0.0.1 (a local
 * resolver on :53, as dnsmasq, systemd-resolved or Talos hostDNS set it up) and the responder on
 * 127.0.0.1:18054, non-mesh names are forwarded to 127.0.0.1:53. Everything runs inside a fresh
 * network namespace (loopback only) so nothing on the host is touched: a real unbound answers on
 * 127.0.0.1:53 there, `ip netns exec` bind-mounts /etc/netns/<ns>/resolv.conf over
 * /etc/resolv.conf for the responder (tools/dns_responder.ts, no --upstream: it reads resolv.conf).
 *
 * The fixed ports (53 and the agent's 18054) are safe beside parallel tests: they are bound only
 * on the loopback of this test's own namespace (random name), which no other test shares.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { createDnsNetns } from "./_netns_test_utils.ts";
import { parseDig, unboundConfig } from "./_test_utils.ts";

Deno.test("dns: forwards to a resolver on 127.0.0.1:53 while answering on 127.0.0.1:18054", async () => {
  const [unbound, dig] = await Promise.all([ensurePeer("unbound"), ensurePeer("dig")]);
  const netns = await createDnsNetns("aether-dnsup", "nameserver 127.0.0.1\n");
  const dir = await Deno.makeTempDir({ prefix: "aether-dnsup-" });
  try {
    const conf = join(dir, "unbound.conf");
    await Deno.writeTextFile(
      conf,
      unboundConfig({
        address: "127.0.0.1",
        port: 53,
        dir,
        server: [
          'local-zone: "upstream.test." static',
          'local-data: "www.upstream.test. 60 IN A 192.0.2.53"',
        ],
      }),
    );
    netns.spawn(unbound, ["-d", "-c", conf]);
    const banner = await netns.startResponder([
      "--dns-address",
      "127.0.0.1:18054",
      "--mesh-domain",
      "mesh.internal",
      "--record",
      "web=10.96.0.10",
    ]);
    assert.match(banner, /listening 127\.0\.0\.1 18054/);

    const ask = async (name: string) =>
      parseDig(
        (await netns.exec(dig, ["@127.0.0.1", "-p", "18054", "+tries=1", "+time=2", name, "A"]))
          .out,
      );
    // Unbound may still be starting: retry the forwarded name a bounded number of times.
    let forwarded = await ask("www.upstream.test");
    for (let i = 0; i < 300 && forwarded.status !== "NOERROR"; i++) {
      await new Promise((r) => setTimeout(r, 200));
      forwarded = await ask("www.upstream.test");
    }
    assert.equal(forwarded.status, "NOERROR", forwarded.raw);
    assert.match(forwarded.answer.join("\n"), /192\.0\.2\.53/);
    const mesh = await ask("web.mesh.internal");
    assert.equal(mesh.status, "NOERROR", mesh.raw);
    assert.match(mesh.answer.join("\n"), /10\.96\.0\.10/);
  } finally {
    await netns.remove();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
