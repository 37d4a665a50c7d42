/**
 * The loop guard excludes only the responder itself: with resolv.conf naming 127.0.0.1 (a local
 * resolver on :53, as dnsmasq, systemd-resolved or Talos hostDNS set it up) and the responder on
 * 127.0.0.1:18054, non-mesh names are forwarded to 127.0.0.1:53. Everything runs inside a fresh
 * network namespace (loopback only) so nothing on the host is touched: a real unbound answers on
 * 127.0.0.1:53 there, `ip netns exec` bind-mounts /etc/netns/<ns>/resolv.conf over
 * /etc/resolv.conf for the responder (agent/dns/cli.ts, no --upstream: it reads resolv.conf).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensurePeer } from "../../lib/peers/mod.ts";
import { parseDig } from "./testing.ts";

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  const o = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { ok: o.success, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

Deno.test("dns: forwards to a resolver on 127.0.0.1:53 while answering on 127.0.0.1:18054", async () => {
  const [ip, unbound, dig] = await Promise.all([
    ensurePeer("ip"),
    ensurePeer("unbound"),
    ensurePeer("dig"),
  ]);
  const ns = `aether-dnsup-${crypto.randomUUID().slice(0, 8)}`;
  const etc = `/etc/netns/${ns}`;
  const dir = await Deno.makeTempDir({ prefix: "aether-dnsup-" });
  const children: Deno.ChildProcess[] = [];
  let responder: Deno.ChildProcess | undefined;
  try {
    const add = await run(ip, ["netns", "add", ns]);
    assert.ok(add.ok, add.out);
    assert.ok((await run(ip, ["-n", ns, "link", "set", "lo", "up"])).ok);
    await Deno.mkdir(etc, { recursive: true });
    await Deno.writeTextFile(`${etc}/resolv.conf`, "nameserver 127.0.0.1\n");
    const conf = join(dir, "unbound.conf");
    await Deno.writeTextFile(
      conf,
      [
        "server:",
        "  interface: 127.0.0.1@53",
        "  do-daemonize: no",
        '  username: ""',
        '  chroot: ""',
        `  directory: "${dir}"`,
        '  pidfile: ""',
        "  use-syslog: no",
        "  num-threads: 1",
        '  module-config: "iterator"',
        "  access-control: 127.0.0.0/8 allow",
        '  local-zone: "upstream.test." static',
        '  local-data: "www.upstream.test. 60 IN A 192.0.2.53"',
        "",
      ].join("\n"),
    );
    children.push(
      new Deno.Command(ip, {
        args: ["netns", "exec", ns, unbound, "-d", "-c", conf],
        stdout: "null",
        stderr: "null",
      }).spawn(),
    );
    responder = new Deno.Command(ip, {
      args: [
        "netns",
        "exec",
        ns,
        Deno.execPath(),
        "run",
        "-A",
        fileURLToPath(new URL("./cli.ts", import.meta.url)),
        "--dns-address",
        "127.0.0.1:18054",
        "--mesh-domain",
        "mesh.internal",
        "--record",
        "web=10.96.0.10",
      ],
      stdout: "piped",
      stderr: "null",
      env: { AETHER_LOG_LEVEL: "warn" },
    }).spawn();
    children.push(responder);
    const reader = responder.stdout.getReader();
    let banner = "";
    const deadline = Date.now() + 60000;
    while (!banner.includes("listening") && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      banner += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    assert.match(banner, /listening 127\.0\.0\.1 18054/);

    const ask = async (name: string) =>
      parseDig(
        (await run(ip, [
          "netns",
          "exec",
          ns,
          dig,
          "@127.0.0.1",
          "-p",
          "18054",
          "+tries=1",
          "+time=2",
          name,
          "A",
        ])).out,
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
    for (const c of children) {
      try {
        c.kill("SIGTERM");
      } catch { /* exited */ }
      await c.status;
    }
    await responder?.stdout.cancel().catch(() => {});
    await run(ip, ["netns", "del", ns]);
    await Deno.remove(etc, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
