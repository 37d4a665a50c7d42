/**
 * `deno task bench [part…]`: runs every benchmark (or the parts named: translate, parse, edit,
 * scopedhop, apply, mesh, fanout, load, edgemem, eg, dns, mtls, capture, cluster, controller, mcs,
 * soak, churn; `--only <part>` also works; `--minutes` for the soak and the churn run, default
 * 30), each size in its own process, and prints one JSON line per run plus a Markdown table for
 * docs/performance.md.
 */
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: { only: { type: "string" }, minutes: { type: "string" } },
});
const parts = new Set([...positionals, ...(values.only ? [values.only] : [])]);
const want = (part: string) => parts.size === 0 || parts.has(part);

/** Runs a bench script (its stderr to ours); throws when it fails, else returns its stdout. */
async function runScript(
  script: string,
  args: string[],
  denoFlags: string[],
  stdout: "piped" | "inherit",
): Promise<Uint8Array> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...denoFlags, script, ...args],
    stdout,
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`${script} ${args.join(" ")} failed`);
  // (An inherited stdout was not captured: reading it would throw.)
  return stdout === "piped" ? out.stdout : new Uint8Array();
}

/** Runs a bench script and returns (and prints) the JSON of its last output line. */
async function runJson(
  script: string,
  args: string[],
  denoFlags: string[] = [],
): Promise<Record<string, number>> {
  const lines = new TextDecoder().decode(await runScript(script, args, denoFlags, "piped")).trim()
    .split("\n");
  const result = JSON.parse(lines[lines.length - 1]);
  console.log(JSON.stringify(result));
  return result;
}

/** Runs a bench script whose output goes straight to ours; throws when it fails. */
async function runInherit(script: string, args: string[], denoFlags: string[] = []) {
  await runScript(script, args, denoFlags, "inherit");
}

const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/model name\s*:\s*(.*)/)?.[1] ??
  "unknown CPU";
console.log(
  `# machine: ${navigator.hardwareConcurrency} cores, ${
    (Deno.systemMemoryInfo().total / 2 ** 30).toFixed(0)
  } GiB, ${cpu}`,
);

if (want("translate")) {
  const rows = [];
  for (const routes of [1000, 10000]) {
    rows.push(await runJson("bench/translate.ts", [String(routes), "5000"]));
  }
  console.log(
    "\n| HTTPRoutes | services | resolve ms | translate ms | encode ms | total ms | one-route edit ms | peak RSS MiB |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.routes} | ${r.services} | ${r.resolveMs} | ${r.translateMs} | ${r.encodeMs} | ${r.totalMs} | ${r.editMs} | ${r.peakRssMiB} |`,
    );
  }
}
if (want("parse")) {
  const rows = [];
  for (const routes of [1000, 10000]) rows.push(await runJson("bench/parse.ts", [String(routes)]));
  console.log(
    "\n| HTTPRoutes | objects | file MiB | `yaml` package ms | file source ms | ratio | one-route edit re-parse ms |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.routes} | ${r.objects} | ${r.fileMiB} | ${r.yamlPackageMs} | ${r.parseMs} | ${r.speedup}× | ${r.editReparseMs} |`,
    );
  }
}
if (want("edit")) {
  // [routes, --scoped-routes-at, change]: 2,000 is the agent's default (at 10k a route table per
  // host, scoped RDS); 0 is one table with VHDS at any size, as before scoped routes.
  const runs: [number, string, string][] = [
    [1000, "2000", "edit"],
    [10000, "2000", "edit"],
    [10000, "0", "edit"],
    [10000, "2000", "add"],
    [10000, "0", "add"],
    [10000, "2000", "remove"],
  ];
  const rows = [];
  for (const [routes, at, change] of runs) {
    const edits = change === "edit" ? "200" : "40";
    const args = [String(routes), "1000", edits, at, ...(change === "edit" ? [] : [change])];
    rows.push(await runJson("bench/edit_latency.ts", args));
  }
  console.log(
    "\n| HTTPRoutes | layout | change | edits | p50 ms | p90 ms | p99 ms | max ms | first ready ms | Envoy MiB |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.routes} | ${r.layout} | ${r.change} | ${r.edits} | ${r.p50Ms} | ${r.p90Ms} | ${r.p99Ms} | ${r.maxMs} | ${r.firstReadyMs} | ${r.envoyAllocatedMiB} |`,
    );
  }
}
if (want("scopedhop")) {
  // What the scoped layout costs a request (its Host lower-casing filter, the scope lookup), at
  // 2,500 routes: the same load through both layouts, alternated (JSON lines, one per run).
  await runInherit("bench/scoped_hop.ts", []);
}
if (want("apply")) {
  // The agent's share of an edit, in process (no Envoy), with the agent task's heap flag.
  await runInherit("bench/edit_apply.ts", ["1000", "1000", "200"], [
    "--v8-flags=--max-semi-space-size=4",
  ]);
  // At 10k: a route edited, added, deleted (the edit, add and remove paths of resolve).
  for (const change of ["edit", "add", "remove"]) {
    await runInherit("bench/edit_apply.ts", ["10000", "1000", "60", change], [
      "--v8-flags=--max-semi-space-size=4",
    ]);
  }
}
if (want("load")) {
  await runInherit("bench/load.ts", []);
}
if (want("edgemem")) {
  // The standalone edge at 1k routes, ready and settled: Envoy's and the agent's memory with
  // Envoy's cluster stats on first use (the default) and with --envoy-eager-stats.
  await runInherit("bench/edge_memory.ts", ["--routes", "1000", "--rounds", "3"]);
}
if (want("eg")) {
  await runInherit("bench/eg_translate.ts", []);
}
if (want("mesh")) {
  const r = await runJson("bench/mesh_push.ts", ["1000", "100", "20", "50"]) as unknown as Record<
    string,
    Record<string, number>
  >;
  console.log(
    "\n| change | p50 ms | p99 ms | of which resolve p50 ms | proxies affected (avg) | responses of other types |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const kind of ["route", "endpoint"]) {
    const k = r[kind];
    console.log(
      `| ${kind} | ${k.p50Ms} | ${k.p99Ms} | ${k.resolveP50Ms} | ${k.affectedAvg} | ${k.otherTypeResponses} |`,
    );
  }
}
if (want("fanout")) {
  const r = await runJson("bench/xds_fanout.ts", ["1000", "1000", "20", "20", "100"]) as unknown as
    & Record<string, Record<string, unknown>>
    & Record<string, unknown>;
  console.log(
    `\n1,000 delta ADS clients; agent RSS ${r.agentRssMiB} MiB (peak ${r.agentPeakRssMiB}); load ${r.load}`,
  );
  console.log(
    "\n| change | affected | to all p50 ms | to all p99 ms | per client p99 ms | agent CPU % |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const kind of ["routeAll", "endpointAll", "routeSome"]) {
    const k = r[kind];
    console.log(
      `| ${kind} | ${k.affectedAvg} | ${k.allP50Ms} | ${k.allP99Ms} | ${k.perClientP99Ms} | ${k.agentCpuPct} |`,
    );
  }
}
/** A row of bench/mtls_hop.ts's JSON (numbers, lists of numbers, percentile records). */
// deno-lint-ignore no-explicit-any
type Row = Record<string, any>;
if (want("mtls")) {
  // Needs SPIRE, Envoy, fortio and the CNI plugins (installed on first use); root for netns pods.
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "bench/mtls_hop.ts", "--rate", "1000", "--seconds", "20", "--rounds", "3"],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!r.success) throw new Error("bench/mtls_hop.ts failed");
  const lines = new TextDecoder().decode(r.stdout).trim().split("\n");
  const m = JSON.parse(lines[lines.length - 1]);
  console.log(JSON.stringify(m));
  console.log(
    "\n| hop (fortio, all rounds) | req/s per round | failed | p50 | p90 | p99 | p99.9 ms | Envoy CPU µs/request |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const [mode, s] of Object.entries(m.modes) as [string, Row][]) {
    const p = s.pooled;
    console.log(
      `| ${mode} | ${s.qps.join(", ")} | ${s.failed} | ${p.p50} | ${p.p90} | ${p.p99} | ${
        p["p99.9"]
      } | ${s.envoyCpuUsPerRequest.join(", ")} |`,
    );
  }
  for (const [mode, d] of Object.entries(m.added) as [string, Row][]) {
    const x = d.pooled, y = d.medianOfRounds;
    console.log(
      `added by ${mode} over plaintext: p50 ${x.p50} (${y.p50}) / p90 ${x.p90} / p99 ${x.p99} ` +
        `(${y.p99}) / p99.9 ${x["p99.9"]} ms (pooled; median of rounds in brackets); ` +
        `Envoy CPU +${d.envoyCpuUsPerRequest} µs/request`,
    );
  }
  if (m.memory) {
    console.log(
      `agent per 100 SVIDs: RSS ${m.memory.rssKiBPer100} KiB, heap ${m.memory.heapKiBPer100} KiB`,
    );
  }
}
if (want("dns")) {
  await runInherit("bench/dns.ts", ["--seconds", "5", "--rounds", "3"]);
}
if (want("capture")) {
  // Root and the peers ip and nft (installed on first use): throwaway netns, one table each.
  const r = await runJson("bench/capture_apply.ts", ["--pods", "20", "--vips", "1000"]);
  console.log(
    `\nCapture table per pod netns, ${r.pods} pods × ${r.vips} VIP:ports, median of ${r.rounds} rounds (ms)`,
  );
  console.log("\n| way | first replace | replace | one-VIP set sync | read back |");
  console.log("|---|---|---|---|---|");
  for (const way of ["ffi", "child"]) {
    console.log(
      `| ${way === "ffi" ? "libnftables FFI (in process)" : "`nsenter … nft -j -f -` child"} | ${
        r[`${way}_firstReplace_ms`]
      } | ${r[`${way}_replace_ms`]} | ${r[`${way}_sync_ms`]} | ${r[`${way}_read_ms`]} |`,
    );
  }
  // The captured hop vs the :18081 lane vs no mesh, the TCP floor vs no mesh (fortio, paced),
  // agent memory per 100 captured pods and a pod's CNI ADD with and without the plugin (root;
  // Envoy, fortio, echo-basic, cnitool and the CNI plugins, installed on first use).
  const h = await runJson("bench/capture_hop.ts", [
    ...["--qps", "500", "--connections", "8", "--seconds", "10", "--rounds", "3"],
  ]) as Row;
  const signed = (x: number) => (x < 0 ? `${x}` : `+${x}`);
  console.log(
    `\nCaptured hop: fortio ${h.qps} req/s over ${h.connections} connections, ${h.seconds} s ` +
      `windows, ${h.rounds} ABBA rounds (pooled percentiles, ms)`,
  );
  console.log(
    "\n| mode | req/s per round | failed | p50 | p90 | p99 | p99.9 | added p50 / p99 | × baseline p50 / p99 | Envoy CPU µs/request |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const [mode, s] of Object.entries(h.modes) as [string, Row][]) {
    const p = s.pooled, a = h.added[mode];
    console.log(
      `| ${mode} | ${s.qps.join(", ")} | ${s.failed} | ${p.p50} | ${p.p90} | ${p.p99} | ${
        p["p99.9"]
      } | ${a ? `${signed(a.pooled.p50)} / ${signed(a.pooled.p99)} (over ${a.over})` : "—"} | ${
        a ? `${a.ratioP50} / ${a.ratioP99}` : "1.00"
      } | ${s.envoyCpuUsPerRequest.join(", ")} |`,
    );
  }
  const cl = h.added["captured-vs-lane"];
  if (cl) {
    console.log(
      `\ncaptured over lane: p50 ${signed(cl.pooled.p50)} / p99 ${signed(cl.pooled.p99)} ms ` +
        `(pooled; median of rounds ${signed(cl.medianOfRounds.p50)} / ` +
        `${signed(cl.medianOfRounds.p99)})`,
    );
  }
  if (h.memory) {
    const kib = (m: Row, k: string) => signed(Math.round(m[k] / 102.4) / 10);
    console.log(
      `\n| per ${h.memory.capture.pods} pods (${h.memory.capture.services} Services) | agent RSS MiB | agent V8 heap MiB | node proxy RSS MiB | all served in ms |`,
    );
    console.log("|---|---|---|---|---|");
    for (const [name, m] of [["capture", h.memory.capture], ["no capture", h.memory.noCapture]]) {
      console.log(
        `| ${name} | ${kib(m, "rssKiBPer100")} | ${kib(m, "heapKiBPer100")} | ${
          kib(m, "envoyRssKiBPer100")
        } | ${m.servedMs} |`,
      );
    }
  }
  if (h.podAdd) {
    const { plain, chained } = h.podAdd;
    console.log(
      `\npod CNI ADD (${h.podAdd.adds} each, ms): bridge + host-local p50 ${plain.p50} / p90 ` +
        `${plain.p90} / max ${plain.max}; with aether-cni chained p50 ${chained.p50} / p90 ` +
        `${chained.p90} / max ${chained.max} (${signed(h.podAdd.addedP50Ms)} p50)`,
    );
  }
}
if (want("cluster")) {
  // The local cluster (root; waits for the machine-wide cluster lock): aether installed by its
  // chart, 1,000 HTTPRoutes on one Gateway, then 60 more one at a time.
  const r = await runJson("bench/cluster_routes.ts", ["1000", "60"]);
  console.log(
    "\n| HTTPRoutes | controller RSS MiB | controller CPU s (creating them) | controller idle CPU % | edge pod RSS MiB | edge CPU s | edge idle CPU % | all Accepted s | all serving s | load average |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  console.log(
    `| ${r.routes} | ${r.controllerRssMiB} | ${r.controllerCpuS} | ${r.controllerIdleCpuPct} | ${r.edgeRssMiB} | ${r.edgeCpuS} | ${r.edgeIdleCpuPct} | ${
      r.allAcceptedMs / 1000
    } | ${r.allServingMs / 1000} | ${r.loadAverage} |`,
  );
  console.log("\n| one more HTTPRoute (n) | → Accepted p50 / p99 ms | → first 200 p50 / p99 ms |");
  console.log("|---|---|---|");
  console.log(
    `| ${r.samples} | ${r.acceptedP50Ms} / ${r.acceptedP99Ms} | ${r.servingP50Ms} / ${r.servingP99Ms} |`,
  );
}
if (want("controller")) {
  // The controller alone on a real kube-apiserver: 1,000 and 10,000 HTTPRoutes in a burst.
  const rows = [];
  for (const routes of [1000, 10000]) {
    rows.push(await runJson("bench/controller_scale.ts", [String(routes), "60"]));
  }
  console.log(
    "\n| HTTPRoutes | created in s | all Accepted s | controller RSS MiB before / peak / settled | CPU s | one more → Accepted p50 / p99 ms | status PATCHes |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.routes} | ${r.createdS} | ${r.allAcceptedS} | ${r.rssBeforeMiB} / ${r.rssPeakMiB} / ${r.rssSettledMiB} | ${r.burstCpuS} | ${r.oneAcceptedP50Ms} / ${r.oneAcceptedP99Ms} | ${r.statusWrites} |`,
    );
  }
}
if (want("mcs")) {
  // The clusterset registry on one real etcd (Debian's etcd-server, installed on first use):
  // 10 origins × 1,000 exported Services × 10 endpoints, and the npm client etcd3 beside it.
  const r = await runJson("bench/mcs_registry.ts", ["10", "1000", "10", "200"], [
    "--v8-flags=--expose-gc",
  ]) as Row;
  const e = r.etcd3, o = r.ours, x = r.ratios ?? {};
  const peer = (f: (e: Row) => string) => e.ok ? f(e) : `failed: ${e.error}`;
  const lat = (c: Row) => `${c.p50Ms} / ${c.p90Ms} / ${c.p99Ms} / ${c.maxMs}`;
  console.log(
    `\n${r.origins} origins × ${r.services} services × ${r.endpoints} endpoints = ${r.keys} keys ` +
      `(${r.valueMiB} MiB of values), one etcd`,
  );
  console.log("\n| | aether (EtcdKv, JSON gateway) | etcd3 1.1.2 (gRPC) | aether / etcd3 |");
  console.log("|---|---|---|---|");
  console.log(
    `| all origins write everything, s | ${o.writeS} | ${peer((e) => e.writeS)} | |`,
  );
  console.log(
    `| keys/s | ${o.keysPerS} | ${peer((e) => e.keysPerS)} | ${x.writeKeysPerS ?? "—"} |`,
  );
  console.log(
    `| CPU s while writing: client / etcd | ${o.clientCpuS} / ${o.etcdCpuS} | ${
      peer((e) => `${e.clientCpuS} / ${e.etcdCpuS}`)
    } | |`,
  );
  console.log(
    `| one endpoint in cluster B → seen, p50 / p90 / p99 / max ms (n=${o.change.n}) | ${
      lat(o.change)
    } (mirror onChange) | ${peer((e) => `${lat(e.change)} (watch event)`)} | p50 ${
      x.changeP50 ?? "—"
    }, p99 ${x.changeP99 ?? "—"} |`,
  );
  const m = r.mirror, rp = r.rePut;
  console.log(
    `\nimporter: first full read ${m.firstReadS} s for ${m.keysHeld} keys (the range call ` +
      `alone, later: ${m.rangeS} s); heap ` +
      `${m.before.heapUsedMiB} → ${m.after.heapUsedMiB} MiB (+${m.heapDeltaMiB}), RSS ` +
      `${m.before.rssMiB} → ${m.after.rssMiB} MiB (+${m.rssDeltaMiB})${
        r.gcForced ? " after gc" : ""
      }`,
  );
  console.log(
    `identical re-puts: writers' re-publish wrote ${rp.writerRevisions} revisions; raw re-put ` +
      `of ${rp.rawKeys} keys in ${rp.rawS} s; mirror onChange calls ${rp.callsBefore} → ` +
      `${rp.callsAfter}`,
  );
  // The EDS leg: the same clusterset, cluster A's edge (ServiceImport backends for every
  // Service, the registry source) with a real Envoy; one endpoint in cluster B → A's EDS.
  const d = await runJson("bench/mcs_eds.ts", ["10", "1000", "10", "60"]) as Row;
  console.log(
    `\none endpoint in cluster B → cluster A (${d.services} imports, ${d.origins} origins × ` +
      `${d.endpoints} endpoints each), p50 / p90 / p99 / max ms (n=${d.changes}):`,
  );
  console.log("\n| A's bare mirror | A's xDS snapshot | A's Envoy EDS | CPU ms per change |");
  console.log("|---|---|---|---|");
  console.log(
    `| ${lat(d.toMirror)} | ${lat(d.toSnapshot)} | ${
      d.toEnvoy ? lat(d.toEnvoy) : "—"
    } | ${d.cpuPerChangeMs} |`,
  );
  const st = d.stages;
  console.log(
    `\nwhere A's time goes, p50 / p90 / p99 / max ms: registry source ${lat(st.sourceMs)}; ` +
      `resolve ${lat(st.resolveMs)}; translate + encode (xds sink) ${lat(st.sinkMs)}`,
  );
}

for (const part of ["soak", "churn"]) {
  if (!parts.has(part)) continue;
  // Only when named: 30 minutes on the local cluster (e2e/soak.ts): `soak` replaces every aether
  // process in turn, `churn` none (a route edit a second, a scale every ten: issue 21).
  await runInherit("bench/soak.ts", [
    "--minutes",
    values.minutes ?? "30",
    ...(part === "churn" ? ["--churn"] : []),
  ]);
}
