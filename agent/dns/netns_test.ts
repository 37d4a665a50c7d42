/**
 * glibc's stub resolver resolves a mesh name. glibc always asks port 53, so the test makes a
 * network namespace (loopback only), writes /etc/netns/<ns>/resolv.conf (`ip netns exec` bind-mounts
 * it over /etc/resolv.conf) pointing at 127.0.0.1, and runs the responder (agent/dns/cli.ts) inside
 * that namespace on 127.0.0.1:53. No DNAT is needed and nothing leaves the namespace; both the
 * namespace and its /etc/netns folder are removed afterwards. In a cluster the CNI's DNAT of :53 →
 * HOST_IP:18054 plays the part of the port. getaddrinfo's AI_ADDRCONFIG ignores loopback, so the
 * namespace also gets one end of a veth pair with 192.0.2.1/24 (TEST-NET-1, unrouted; the host end
 * has no address); without it `getent ahosts*` would not even send a query.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ensurePeer } from "../../lib/peers/mod.ts";

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  const o = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { ok: o.success, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

Deno.test("glibc (getent) in a network namespace resolves a mesh name", async () => {
  const ip = await ensurePeer("ip");
  const ns = `aether-dns-${crypto.randomUUID().slice(0, 8)}`;
  const etc = `/etc/netns/${ns}`;
  const veth = `adns${ns.slice(-8)}`;
  let child: Deno.ChildProcess | undefined;
  try {
    const add = await run(ip, ["netns", "add", ns]);
    assert.ok(add.ok, add.out);
    assert.ok((await run(ip, ["-n", ns, "link", "set", "lo", "up"])).ok);
    for (
      const args of [
        ["link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns],
        ["-n", ns, "addr", "add", "192.0.2.1/24", "dev", "eth0"],
        ["-n", ns, "link", "set", "eth0", "up"],
        ["link", "set", veth, "up"],
      ]
    ) {
      const r = await run(ip, args);
      assert.ok(r.ok, `ip ${args.join(" ")}: ${r.out}`);
    }
    await Deno.mkdir(etc, { recursive: true });
    await Deno.writeTextFile(
      `${etc}/resolv.conf`,
      "nameserver 127.0.0.1\nsearch ns.svc.cluster.local\noptions ndots:1 timeout:1 attempts:2\n",
    );
    child = new Deno.Command(ip, {
      args: [
        "netns",
        "exec",
        ns,
        Deno.execPath(),
        "run",
        "-A",
        fileURLToPath(new URL("./cli.ts", import.meta.url)),
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
      ],
      stdout: "piped",
      stderr: "piped",
      env: { AETHER_LOG_LEVEL: "warn" },
    }).spawn();
    const reader = child.stdout.getReader();
    let banner = "";
    const deadline = Date.now() + 60000;
    while (!banner.includes("listening") && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      banner += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    assert.match(banner, /listening 127\.0\.0\.1 53/);

    const v4 = await run(ip, ["netns", "exec", ns, "getent", "ahostsv4", "web.mesh.internal"]);
    assert.ok(v4.ok, v4.out);
    assert.match(v4.out, /^10\.96\.0\.10\s+STREAM web\.mesh\.internal/m);
    const hosts = await run(ip, ["netns", "exec", ns, "getent", "hosts", "web.mesh.internal"]);
    assert.ok(hosts.ok, hosts.out);
    assert.match(hosts.out, /^(fd00::10|10\.96\.0\.10)\s+web\.mesh\.internal/m);
    // A name with only an IPv4 VIP: AAAA is NODATA, so glibc falls back to A.
    const v4only = await run(ip, ["netns", "exec", ns, "getent", "hosts", "v4only.mesh.internal"]);
    assert.ok(v4only.ok, v4only.out);
    assert.match(v4only.out, /^10\.96\.0\.11\s+v4only\.mesh\.internal/m);
    const missing = await run(ip, ["netns", "exec", ns, "getent", "hosts", "nope.mesh.internal"]);
    assert.equal(missing.ok, false, "NXDOMAIN → getent exit 2");
  } finally {
    if (child) {
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
      await child.status;
      await child.stdout.cancel().catch(() => {});
      await child.stderr.cancel().catch(() => {});
    }
    await run(ip, ["link", "del", veth]);
    await run(ip, ["netns", "del", ns]);
    await Deno.remove(etc, { recursive: true }).catch(() => {});
  }
});
