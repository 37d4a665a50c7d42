/**
 * `deno task bench soak [--minutes N] [--churn] [--samples file.json]` (default 30): the soak of
 * e2e/soak.ts on the local cluster — every aether process replaced in turn, or with `--churn`
 * none: a route edit a second and a scale every ten (issue 21's long run). Prints its progress,
 * one JSON line (the report without the samples) and a Markdown summary for docs/performance.md,
 * and writes the RSS of every component over time as a picture to docs/img/soak_rss.svg
 * (churn_rss.svg, plus each edit's latency in churn_edits.svg, the node agent's RSS, anonymous
 * memory and V8 heap in churn_agent_memory.svg and the controller's in
 * churn_controller_memory.svg); `--samples` writes the whole report with every sample as JSON,
 * and `--from <that file>` draws and summarises it again without a run (with `--churn` for a churn
 * report). Exits 1 when the soak found a problem.
 * @module
 */
import { parseArgs } from "node:util";
import { withCluster } from "../testbed/cluster/mod.ts";
import { runSoak, type SoakReport } from "../e2e/soak.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    minutes: { type: "string" },
    churn: { type: "boolean" },
    samples: { type: "string" },
    from: { type: "string" },
  },
});
const minutes = Number(values.minutes ?? 30);
const churn = values.churn === true;

/** RSS over time as an SVG line chart, one line per component. */
export function rssSvg(r: SoakReport): string {
  return seriesSvg(r, (s) => s.rssMiB, "RSS MiB per component");
}

/**
 * The node agent's memory over time: its pod's RSS and anonymous memory, each program's share of
 * the latter (the agent and the CNI installer beside it) and the agent's V8 heap (used, total): a
 * leak in JS raises the floor of the heap used, a native one a program's anonymous memory alone.
 */
export function agentMemorySvg(r: SoakReport): string {
  return seriesSvg(r, (s) => ({
    "pod RSS": s.rssMiB.agent ?? 0,
    "pod anonymous": s.anonMiB?.agent ?? 0,
    ...Object.fromEntries(
      Object.entries(s.agentProgramsAnonMiB ?? {}).map(([p, v]) => [`${p} anonymous`, v]),
    ),
    "V8 heap total": s.agentHeapMiB?.total ?? 0,
    "V8 heap used": s.agentHeapMiB?.used ?? 0,
  }), "node agent pod MiB");
}

/**
 * The controller's memory over time: its pods' RSS and anonymous memory and its V8 heap (used,
 * total) — a floor of the heap used that keeps rising is a JS leak; the total growing with the
 * used flat is V8 keeping pages.
 */
export function controllerMemorySvg(r: SoakReport): string {
  return seriesSvg(r, (s) => ({
    RSS: s.rssMiB.controller ?? 0,
    anonymous: s.anonMiB?.controller ?? 0,
    "V8 heap total": s.controllerHeapMiB?.total ?? 0,
    "V8 heap used": s.controllerHeapMiB?.used ?? 0,
  }), "controller MiB");
}

/** `pick`'s series over the samples as an SVG line chart. */
function seriesSvg(
  r: SoakReport,
  pick: (s: SoakReport["rss"][number]) => Record<string, number>,
  what: string,
): string {
  const w = 780, h = 320, left = 50, bottom = 30, top = 20, right = 210;
  const series = r.rss.map((s) => ({ atS: s.atS, v: pick(s) }));
  const names = [...new Set(series.flatMap((s) => Object.keys(s.v)))];
  const maxT = Math.max(1, ...series.map((s) => s.atS));
  const maxY = Math.max(1, ...series.flatMap((s) => Object.values(s.v))) * 1.1;
  const x = (t: number) => left + ((w - left - right) * t) / maxT;
  const y = (v: number) => h - bottom - ((h - bottom - top) * v) / maxY;
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];
  const lines = names.map((n, i) => {
    const pts = series.map((s) => `${x(s.atS).toFixed(1)},${y(s.v[n] ?? 0).toFixed(1)}`);
    return `<polyline fill="none" stroke="${colors[i % colors.length]}" stroke-width="1.5" ` +
      `points="${pts.join(" ")}"/><text x="${w - right + 10}" y="${top + 16 * i + 10}" ` +
      `fill="${colors[i % colors.length]}">${n}</text>`;
  });
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    `<text x="${left - 6}" y="${y(maxY * f) + 4}" text-anchor="end">${Math.round(maxY * f)}</text>`
  );
  // Route edits have their own picture (churn_edits.svg); a churn run makes one a second.
  const marks = r.events.filter((e) => e.action !== "route edited")
    .map((e) => `M${x(e.atS).toFixed(1)} ${top}V${h - bottom}`);
  const events = marks.length ? [`<path d="${marks.join("")}" stroke="#ccc"/>`] : [];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" ` +
    `font-family="sans-serif" font-size="11">` +
    `<rect width="${w}" height="${h}" fill="white"/>${events.join("")}` +
    `<line x1="${left}" y1="${h - bottom}" x2="${w - right}" y2="${h - bottom}" stroke="black"/>` +
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${h - bottom}" stroke="black"/>` +
    `${ticks.join("")}<text x="${(left + w - right) / 2}" y="${h - 8}" text-anchor="middle">` +
    `seconds (${r.seconds} s; grey lines: actions but route edits) — ${what}</text>` +
    `${lines.join("")}</svg>\n`;
}

/** Each route edit's time to be served through both lanes, over the run, as an SVG. */
export function editSvg(r: SoakReport): string {
  const w = 720, h = 240, left = 50, bottom = 30, top = 20, right = 20;
  const edits = r.events.filter((e) => e.action === "route edited" && !e.error);
  const maxT = Math.max(1, r.seconds), maxY = Math.max(1, ...edits.map((e) => e.ms)) * 1.1;
  const x = (t: number) => left + ((w - left - right) * t) / maxT;
  const y = (v: number) => h - bottom - ((h - bottom - top) * v) / maxY;
  const dots = edits.map((e) =>
    `<circle cx="${x(e.atS).toFixed(1)}" cy="${y(e.ms).toFixed(1)}" r="1.2" fill="#1f77b4"/>`
  );
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    `<text x="${left - 6}" y="${y(maxY * f) + 4}" text-anchor="end">${Math.round(maxY * f)}</text>`
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" ` +
    `font-family="sans-serif" font-size="11"><rect width="${w}" height="${h}" fill="white"/>` +
    `<line x1="${left}" y1="${h - bottom}" x2="${w - right}" y2="${h - bottom}" stroke="black"/>` +
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${h - bottom}" stroke="black"/>` +
    `${ticks.join("")}<text x="${(left + w - right) / 2}" y="${h - 8}" text-anchor="middle">` +
    `seconds (${r.seconds} s) — route edit → served through mesh and edge, ms</text>` +
    `${dots.join("")}</svg>\n`;
}

if (import.meta.main) {
  // `--from <samples.json>`: draw and summarise a report saved by `--samples`, without a run.
  const r: SoakReport = values.from
    ? JSON.parse(await Deno.readTextFile(values.from))
    : await withCluster((c) =>
      runSoak(c, {
        seconds: minutes * 60,
        mode: churn ? "churn" : "replace",
        log: (l) => console.error(`soak: ${l}`),
      })
    );
  await Deno.mkdir("docs/img", { recursive: true });
  const name = churn ? "churn" : "soak";
  const pictures: [string, string][] = [[`docs/img/${name}_rss.svg`, rssSvg(r)]];
  if (churn) pictures.push(["docs/img/churn_edits.svg", editSvg(r)]);
  if (churn) pictures.push(["docs/img/churn_agent_memory.svg", agentMemorySvg(r)]);
  if (churn) pictures.push(["docs/img/churn_controller_memory.svg", controllerMemorySvg(r)]);
  for (const [path, svg] of pictures) await Deno.writeTextFile(path, svg);
  // In the repository's own format, so the pictures commit as written (`deno fmt --check`).
  await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", ...pictures.map(([path]) => path)],
  }).output();
  if (values.samples && !values.from) await Deno.writeTextFile(values.samples, JSON.stringify(r));
  const byAction = new Map<string, number[]>();
  for (const e of r.events) byAction.set(e.action, [...byAction.get(e.action) ?? [], e.ms]);
  console.log(JSON.stringify({ ...r, rss: undefined, samples: r.rss.length }));
  console.log(`\n| lane | requests | failed | p50 ms | p99 ms |\n|---|---|---|---|---|`);
  for (const [lane, l] of [["mesh", r.mesh], ["edge", r.edge]] as const) {
    console.log(`| ${lane} | ${l.sent} | ${l.failed} | ${l.p50Ms} | ${l.p99Ms} |`);
  }
  console.log(`\n| action | times | ms each (max) |\n|---|---|---|`);
  for (const [a, ms] of byAction) console.log(`| ${a} | ${ms.length} | ${Math.max(...ms)} |`);
  console.log(`\nRSS growth after warm-up: ${JSON.stringify(r.growth)}`);
  console.log(r.problems.length ? `problems:\n- ${r.problems.join("\n- ")}` : "no problem");
  if (r.problems.length) Deno.exit(1);
}
