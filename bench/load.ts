/**
 * Whole-process load: the translate bench's synthetic config (1 GatewayClass, 1 Gateway, 5,000
 * Services + EndpointSlices, N HTTPRoutes) as one multi-document YAML file, and per size
 * - `agent translate --config <file> --output json` to /dev/null: start to exit, peak RSS;
 * - `agent standalone --config <file>` with a real Envoy: start until `/readyz` answers 200 (Envoy
 *   ACKed the config), and the agent's peak RSS then.
 *
 *   deno run -A bench/load.ts [--routes 1000,10000]
 *
 * The agent runs with the V8 flags of the `agent` task in deno.json (the way users start it).
 * Prints one JSON line per size and a Markdown table.
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { stringify } from "yaml";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { freePort } from "../e2e/http_client.ts";
import { syntheticConfig } from "../testbed/fixtures/synthetic_config.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { routes: { type: "string", default: "1000,10000" } },
});
const envoy = await ensurePeer("envoy");
const agentMain = new URL("../agent/main.ts", import.meta.url).pathname;
const dir = await Deno.makeTempDir({ prefix: "aether-loadbench-" });
const agentTask: string = JSON.parse(
  await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
).tasks.agent;
const v8Flags = agentTask.split(/\s+/).filter((a) => a.startsWith("--v8-flags="));

/** Wall seconds and peak RSS (MiB) of `agent translate`, output to /dev/null. */
async function translateRun(file: string): Promise<{ s: number; rssMiB: number; code: number }> {
  const out = await new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "%e %M",
      "sh",
      "-c",
      `"$0" "$@" >/dev/null 2>/dev/null`,
      Deno.execPath(),
      "run",
      "-A",
      ...v8Flags,
      agentMain,
      "translate",
      "--config",
      file,
      "--output",
      "json",
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(out.stderr).trim().split("\n");
  const [s, kb] = lines[lines.length - 1].split(" ").map(Number);
  return { s, rssMiB: Math.round(kb / 1024), code: out.code };
}

/** Start of `agent standalone` until /readyz is 200; the agent's peak RSS at that point. */
async function readyRun(file: string): Promise<{ s: number; rssMiB: number }> {
  const admin = freePort();
  const state = join(dir, `state-${admin}`);
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...v8Flags,
      agentMain,
      "standalone",
      "--config",
      file,
      "--envoy",
      envoy,
      "--admin-address",
      `127.0.0.1:${admin}`,
      "--xds-address",
      "127.0.0.1:0",
      "--dns-address",
      "none",
      "--node-id",
      `loadbench-${admin}`,
      "--state-dir",
      state,
    ],
    stdout: "null",
    stderr: "null",
    env: { AETHER_LOG_LEVEL: "error" },
  }).spawn();
  try {
    for (;;) {
      const r = await fetch(`http://127.0.0.1:${admin}/readyz`).catch(() => undefined);
      await r?.body?.cancel();
      if (r?.status === 200) break;
      if (performance.now() - started > 600_000) throw new Error("not ready after 600 s");
      await new Promise((res) => setTimeout(res, 20));
    }
    const s = (performance.now() - started) / 1000;
    const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return { s, rssMiB: Math.round(kb / 1024) };
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

const rows = [];
try {
  for (const routes of values.routes!.split(",").map(Number)) {
    const file = join(dir, `routes-${routes}.yaml`);
    const objects = syntheticConfig({ services: 5000, routes, port: freePort() });
    await Deno.writeTextFile(file, objects.map((o) => stringify(o)).join("---\n"));
    const t = await translateRun(file);
    if (t.code !== 0) throw new Error(`agent translate exited ${t.code} on ${file}`);
    const ready = await readyRun(file);
    const row = {
      routes,
      objects: objects.length,
      fileMiB: +((await Deno.stat(file)).size / 2 ** 20).toFixed(2),
      translateS: t.s,
      translateRssMiB: t.rssMiB,
      readyS: +ready.s.toFixed(2),
      readyRssMiB: ready.rssMiB,
    };
    console.log(JSON.stringify(row));
    rows.push(row);
  }
} finally {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
console.log(`\nload average at the end: ${load}`);
console.log(
  "\n| HTTPRoutes | objects | file MiB | agent translate s (start → exit) | its peak RSS MiB | agent standalone s (start → Envoy ready) | agent peak RSS MiB |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.routes} | ${r.objects} | ${r.fileMiB} | ${r.translateS} | ${r.translateRssMiB} | ${r.readyS} | ${r.readyRssMiB} |`,
  );
}
console.log(JSON.stringify({ bench: "load", load, rows }));
