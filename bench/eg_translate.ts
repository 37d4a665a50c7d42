/**
 * Side by side with Envoy Gateway on the same input file (GatewayClass, one Gateway, 5,000
 * Services with EndpointSlices, N HTTPRoutes; testbed/fixtures/synthetic_config.ts), per size:
 * - whole process: `egctl x translate --from gateway-api --to xds` and `agent translate
 *   --output json`, each to /dev/null, wall time and peak RSS (`/usr/bin/time`);
 * - core translation: Envoy Gateway's Gateway API → IR and IR → xDS stages alone
 *   (tools/peers/envoy-gateway-harness, built by bench/eg_harness.ts; median of its rounds; its
 *   own loader builds the input in seconds at 10k, EG's YAML loader with AETHER_EG_LOADER=eg) vs
 *   aether's resolve + translate + encode without admission (bench/eg_core.ts); both sides as
 *   the median of `--rounds` rounds in one process, each on its own copy of the objects.
 *
 *   deno run -A bench/eg_translate.ts [--routes 1000,10000] [--rounds 3] [--egctl-max 1000]
 *
 * `egctl` runs only for sizes ≤ --egctl-max (it takes minutes per 1,000 routes). Prints a Markdown
 * table and a JSON line.
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { stringify } from "yaml";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { syntheticConfig } from "../testbed/fixtures/synthetic_config.ts";
import { ensureEgHarness } from "./eg_harness.ts";
import { checkEgctl } from "./egctl_check.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    routes: { type: "string", default: "1000,10000" },
    rounds: { type: "string", default: "3" },
    "egctl-max": { type: "string", default: "1000" },
  },
});
const rounds = Number(values.rounds);
const here = new URL(".", import.meta.url).pathname;
const harness = await ensureEgHarness();
const egctl = await ensurePeer("egctl");
await checkEgctl(egctl);
const dir = await Deno.makeTempDir({ prefix: "aether-egbench-" });

/** Wall seconds and peak RSS of a command with stdout to /dev/null. */
async function timed(cmd: string, args: string[]): Promise<{ s: number; rssMiB: number }> {
  const out = await new Deno.Command("/usr/bin/time", {
    args: ["-f", "%e %M", "sh", "-c", `"$0" "$@" >/dev/null`, cmd, ...args],
    stdout: "null",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(out.stderr).trim().split("\n");
  const [s, kb] = lines[lines.length - 1].split(" ").map(Number);
  return { s, rssMiB: Math.round(kb / 1024) };
}

async function json(cmd: string, args: string[], env?: Record<string, string>) {
  const out = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  const last = text.trim().split("\n").filter((l) => l.startsWith("{")).pop();
  if (!out.success || !last) {
    throw new Error(`${cmd} failed: ${text.slice(-2000)}${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(last) as Record<string, number>;
}

const rows: Record<string, unknown>[] = [];
try {
  for (const routes of values.routes!.split(",").map(Number)) {
    const file = join(dir, `routes-${routes}.yaml`);
    const objects = syntheticConfig({ services: 5000, routes, port: 10080 });
    await Deno.writeTextFile(file, objects.map((o) => stringify(o)).join("---\n"));
    const eg = await json(harness, ["-test.run", "TestTranslate"], {
      AETHER_EG_INPUT: file,
      AETHER_EG_ROUNDS: String(rounds),
    });
    const core = await json(Deno.execPath(), [
      "run",
      "-A",
      join(here, "eg_core.ts"),
      file,
      String(rounds),
    ]);
    const aetherWhole = await timed(Deno.execPath(), [
      "run",
      "-A",
      join(here, "..", "agent", "main.ts"),
      "translate",
      "--config",
      file,
      "--output",
      "json",
    ]);
    const egWhole = routes <= Number(values["egctl-max"])
      ? await timed(egctl, ["x", "translate", "--from", "gateway-api", "--to", "xds", "-f", file])
      : undefined;
    const row = {
      routes,
      egIrMs: +eg.gatewayApiToIrMs.toFixed(1),
      egXdsMs: +eg.irToXdsMs.toFixed(1),
      egCoreMs: +eg.totalMs.toFixed(1),
      egPeakRssMiB: Math.round(eg.peakRssMiB),
      // The harness's loader and its time (outside the timed part).
      egLoader: eg.loader,
      egLoadMs: eg.loadMs,
      ...core,
      aetherCoreMs: core.coreMs,
      speedup: +(eg.totalMs / core.coreMs).toFixed(2),
      // Like for like with EG's timed part, which stops at go-control-plane structs (no bytes).
      speedupNoEncode: +(eg.totalMs / core.coreNoEncodeMs).toFixed(2),
      aetherWholeS: aetherWhole.s,
      aetherWholeRssMiB: aetherWhole.rssMiB,
      egctlWholeS: egWhole?.s,
      egctlWholeRssMiB: egWhole?.rssMiB,
    };
    console.error(JSON.stringify(row));
    rows.push(row);
  }
} finally {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
console.log(`\nload average at the end: ${load}`);
console.log(
  "\n| routes | EG GW API→IR ms | EG IR→xDS ms | EG core ms | aether resolve+translate+encode ms | (admission ms) | aether ÷ EG | without encode: ms, ÷ EG | egctl whole s / MiB | agent translate whole s / MiB | aether cold round ms |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows as Record<string, number>[]) {
  console.log(
    `| ${r.routes} | ${r.egIrMs} | ${r.egXdsMs} | ${r.egCoreMs} | ${r.coreMs} (${r.resolveMs} + ${r.translateMs} + ${r.encodeMs}) | ${r.admitMs} | ${r.speedup}× faster | ${r.coreNoEncodeMs}, ${r.speedupNoEncode}× | ${
      r.egctlWholeS ?? "not run"
    } / ${
      r.egctlWholeRssMiB ?? "-"
    } | ${r.aetherWholeS} / ${r.aetherWholeRssMiB} | ${r.coldCoreMs} |`,
  );
}
console.log(JSON.stringify({ bench: "eg", load, rows }));
