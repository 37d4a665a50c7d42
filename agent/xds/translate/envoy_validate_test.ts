import assert from "node:assert/strict";
import { ensurePeer } from "../../../testbed/peers/mod.ts";
import { newerFields } from "../proto.ts";
import { translate } from "./mod.ts";
import { encodeBootstrap, envoyValidate, goldenCases, staticBootstrap } from "./_test_utils.ts";
import { join } from "node:path";

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

Deno.test("envoy --mode validate really checks inline routes (negative control)", async () => {
  const envoy = await ensurePeer("envoy");
  const ir = structuredClone(goldenCases().find((c) => c.name === "matches")!.ir);
  const bootstrap = staticBootstrap(translate(ir));
  // Envoy refuses a path_separated_prefix ending in "/": translate must never emit one.
  const listeners = (bootstrap.static_resources as { listeners: Record<string, unknown>[] })
    .listeners;
  const hcm = ((listeners[0].filter_chains as Record<string, unknown>[])[0].filters as {
    typed_config: { route_config: { virtual_hosts: { routes: Record<string, unknown>[] }[] } };
  }[])[0].typed_config;
  hcm.route_config.virtual_hosts[0].routes[0].match = { path_separated_prefix: "/foo/" };
  await assert.rejects(envoyValidate(envoy, bootstrap), /path_separated_prefix|validation/i);
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

/** Runs `cmd args` and returns stdout (throws on failure). */
async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

Deno.test("real Envoy 1.40 binds a listener inside another netns via network_namespace_filepath", async () => {
  const envoy = await ensurePeer("envoy");
  const ip = await ensurePeer("ip");
  const ns = `aether-translate-${Deno.pid}`;
  const dir = await Deno.makeTempDir({ prefix: "aether-netns-" });
  await run(ip, ["netns", "add", ns]);
  let child: Deno.ChildProcess | undefined;
  try {
    await run(ip, ["netns", "exec", ns, ip, "link", "set", "lo", "up"]);
    const ir = structuredClone(goldenCases().find((c) => c.name === "matches")!.ir);
    ir.listeners[0] = { ...ir.listeners[0], address: "127.0.0.1", port: 18089 };
    const bootstrap = staticBootstrap(translate(ir));
    const listeners = (bootstrap.static_resources as { listeners: Record<string, unknown>[] })
      .listeners;
    const address = listeners[0].address as { socket_address: Record<string, unknown> };
    address.socket_address.network_namespace_filepath = `/var/run/netns/${ns}`;
    const file = join(dir, "bootstrap.pb");
    await Deno.writeFile(file, encodeBootstrap(bootstrap));
    child = new Deno.Command(envoy, {
      args: ["-c", file, "--disable-hot-restart", "--concurrency", "1", "-l", "warning"],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let bound = false;
    for (let i = 0; i < 600 && !bound; i++) {
      const ss = await run(ip, ["netns", "exec", ns, "ss", "-ltnH"]);
      bound = ss.includes("127.0.0.1:18089");
      if (!bound) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(bound, "Envoy's listener is bound inside the pod netns");
    const hostSockets = await run("ss", ["-ltnH"]);
    assert.ok(!hostSockets.includes("127.0.0.1:18089"), "and not in the host netns");
  } finally {
    if (child) {
      child.kill("SIGTERM");
      await child.stderr.cancel();
      await child.status;
    }
    await run(ip, ["netns", "del", ns]);
    await Deno.remove(dir, { recursive: true });
  }
});
