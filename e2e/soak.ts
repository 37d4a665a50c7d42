/**
 * The churn soak on the local cluster (issue 22): aether installed by its chart, a paced prober
 * through the node proxy (the mesh lane, from a client pod) and one through an edge (the Gateway's
 * LoadBalancer address), while a schedule replaces every aether process and churns the mesh: the
 * node agent's pod deleted, the node-proxy DaemonSet rolled, the edge Deployment rolled, the
 * controller's pod deleted, a route edited (and waited for through both lanes), the backend
 * Deployment scaled up, down and rolled, and the API server restarted once. RSS of every aether
 * component is sampled throughout. Fails (`problems`) on any failed request, any 5xx, an action
 * that did not complete, or (in a soak of 10 minutes or more) RSS growth over 10 % after warm-up. `bench/soak.ts` runs it for
 * minutes, `e2e/cluster_soak_test.ts` for three.
 * @module
 */
import type { Cluster } from "../testbed/cluster/mod.ts";
import { GATEWAY_LABEL } from "../controller/mod.ts";
import {
  condition,
  type HaEnv,
  type LoadResult,
  podUsage,
  releaseNs,
  setUp,
  startLoad,
  waitEdit,
  waitFor,
  workloads,
} from "./cluster_ha.ts";
import { rollout } from "./kubectl.ts";
import { nodeAgentText, nodeNetText } from "./cluster_capture.ts";
import { join } from "node:path";

/** What the soak runs. */
export interface SoakOptions {
  /** How long the schedule runs (the last action started then still finishes). */
  seconds: number;
  /** Requests per second of each prober. Default 50. */
  rate?: number;
  /** Seconds between the starts of two actions. Default 20. */
  intervalS?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /**
   * `replace` (default): the schedule above, every aether process replaced in turn. `churn`: no
   * process replaced — a route edited every `intervalS` (default then 1 s; each edit waited for
   * through both lanes) and `web` scaled between 1 and 3 every tenth action: what a long-lived
   * controller and node agent see (issue 21's long run; a leak shows, no restart hides it).
   */
  mode?: "replace" | "churn";
}

/** One action of the schedule. */
export interface SoakEvent {
  /** Seconds since the probers started. */
  atS: number;
  action: string;
  ms: number;
  error?: string;
}

/** One RSS sample: MiB per component (the sum over its pods). */
export interface RssSample {
  atS: number;
  rssMiB: Record<string, number>;
  /** Anonymous memory (RssAnon: heaps, not file pages), MiB per component. */
  anonMiB?: Record<string, number>;
  /**
   * The node agent's V8 heap from its `/metrics` (used, total, external; MiB): a JS leak raises
   * the floor of `used`, a native one raises anonymous memory with `used` flat.
   */
  agentHeapMiB?: Record<string, number>;
  /** The controller's V8 heap (used, total, external; MiB), summed over its pods' `/metrics`. */
  controllerHeapMiB?: Record<string, number>;
  /**
   * Anonymous memory (MiB) of each program in the node agent's pod: the agent (`deno
   * agent/main.ts`) and the CNI installer beside it (`deno cni/main.ts`), told apart.
   */
  agentProgramsAnonMiB?: Record<string, number>;
}

/** What a soak saw. */
export interface SoakReport {
  seconds: number;
  mesh: LoadResult;
  edge: LoadResult;
  events: SoakEvent[];
  rss: RssSample[];
  /** Per component: the median RSS of the last fifth over that of the fifth after warm-up. */
  growth: Record<string, number>;
  /** Why it failed; empty when it passed. */
  problems: string[];
}

/** The aether components whose RSS is sampled, by their pods' label selector. */
const COMPONENTS: Record<string, string> = {
  agent: "app.kubernetes.io/component=agent",
  "node-proxy": "app.kubernetes.io/component=node-proxy",
  controller: "app.kubernetes.io/component=controller",
  edge: `${GATEWAY_LABEL}=default.ha`,
};

type Pod = {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status: { podIP?: string; conditions?: { type: string; status: string }[] };
};

/** The controller's admin port (the chart's `--admin-address=$(POD_IP):15010`). */
const CONTROLLER_ADMIN_PORT = 15010;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** The web Deployment leaves like a well-behaved app: its endpoint goes before its process. */
const GRACEFUL_WEB = JSON.stringify({
  spec: {
    template: {
      spec: {
        terminationGracePeriodSeconds: 15,
        containers: [{ name: "echo", lifecycle: { preStop: { sleep: { seconds: 5 } } } }],
      },
    },
  },
});

async function pods(env: HaEnv, selector: string): Promise<Pod[]> {
  return (await env.json(["-n", releaseNs, "get", "pods", "-l", selector])).items as Pod[];
}

/** Deletes the (first) pod of `selector` and waits for a Ready replacement. */
async function replacePod(env: HaEnv, selector: string): Promise<void> {
  const [old] = await pods(env, selector);
  await env.k(["-n", releaseNs, "delete", "pod", old.metadata.name, "--wait=false"]);
  await waitFor(
    `a Ready replacement of ${old.metadata.name}`,
    async () =>
      (await pods(env, selector)).find((p) =>
        p.metadata.uid !== old.metadata.uid && !p.metadata.deletionTimestamp &&
        condition(p.status.conditions, "Ready")?.status === "True"
      ),
    300_000,
  );
}

/** The schedule, in order; it starts over when it ends (the API server restart only once). */
function schedule(
  c: Cluster,
  env: HaEnv,
  edge: string,
): [string, () => Promise<void | "skipped">][] {
  let edit = 0, apiServerRestarted = false;
  const scale = (n: number) => async () => {
    await env.k(["scale", "deployment/web", `--replicas=${n}`]);
    await rollout(c.kubeconfig, "default", "deployment/web");
  };
  return [
    ["node agent pod deleted", () => replacePod(env, COMPONENTS.agent)],
    ["route edited", async () => {
      edit++;
      await env.k(["apply", "-f", "-"], workloads(String(edit)));
      await waitEdit(env, String(edit), 120_000);
    }],
    ["node-proxy DaemonSet rolled", async () => {
      await env.k(["-n", releaseNs, "rollout", "restart", "daemonset/aether-node-proxy"]);
      await rollout(c.kubeconfig, releaseNs, "daemonset/aether-node-proxy");
    }],
    ["web scaled to 3", scale(3)],
    ["edge rolled", async () => {
      await env.k(["-n", releaseNs, "rollout", "restart", edge]);
      await rollout(c.kubeconfig, releaseNs, edge);
    }],
    ["web scaled to 1", scale(1)],
    ["controller pod deleted", () => replacePod(env, COMPONENTS.controller)],
    ["web rolled", async () => {
      await env.k(["rollout", "restart", "deployment/web"]);
      await rollout(c.kubeconfig, "default", "deployment/web");
    }],
    ["API server restarted", async () => {
      if (apiServerRestarted) return "skipped";
      apiServerRestarted = true;
      await c.stopApiServer();
      await sleep(5_000);
      await c.startApiServer();
    }],
  ];
}

/** The churn schedule: nine route edits, then `web` scaled (to 3, next time to 1). */
function churnSchedule(c: Cluster, env: HaEnv): [string, () => Promise<void>][] {
  let edit = 0, replicas = 1;
  const editRoute: [string, () => Promise<void>] = ["route edited", async () => {
    edit++;
    await env.k(["apply", "-f", "-"], workloads(String(edit)));
    await waitEdit(env, String(edit), 120_000);
  }];
  return [
    ...Array.from({ length: 9 }, () => editRoute),
    ["web scaled", async () => {
      replicas = replicas === 1 ? 3 : 1;
      await env.k(["scale", "deployment/web", `--replicas=${replicas}`]);
      await rollout(c.kubeconfig, "default", "deployment/web");
    }],
  ];
}

/** A Deno process's V8 heap figures in MiB (used, total, external), from its Prometheus text. */
export function v8HeapMiB(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (
    const [key, name] of [["used", "deno_heap_used_bytes"], ["total", "deno_heap_total_bytes"], [
      "external",
      "deno_external_memory_bytes",
    ]]
  ) {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(metrics);
    if (m) out[key] = Math.round(Number(m[1]) / 2 ** 20 * 10) / 10;
  }
  return out;
}

/** Samples RSS of every component every 5 s until `stop` resolves. */
async function sampleRss(
  c: Cluster,
  env: HaEnv,
  t0: number,
  out: RssSample[],
  stopped: () => boolean,
) {
  while (!stopped()) {
    const rssMiB: Record<string, number> = {}, anonMiB: Record<string, number> = {};
    const agentProgramsAnonMiB: Record<string, number> = {};
    try {
      for (const [name, selector] of Object.entries(COMPONENTS)) {
        let sum = 0, anon = 0;
        for (const p of await pods(env, selector)) {
          const u = await podUsage(p.metadata.uid);
          sum += u.rssMiB;
          anon += u.anonMiB;
          if (name !== "agent") continue;
          for (const [program, m] of Object.entries(u.byProgram)) {
            agentProgramsAnonMiB[program] = (agentProgramsAnonMiB[program] ?? 0) + m.anonMiB;
          }
        }
        rssMiB[name] = sum;
        anonMiB[name] = anon;
      }
      const agentHeapMiB = v8HeapMiB(await nodeAgentText(c, "/metrics").catch(() => ""));
      const controllerHeapMiB: Record<string, number> = {};
      for (const p of await pods(env, COMPONENTS.controller)) {
        if (!p.status.podIP) continue;
        const url = `http://${p.status.podIP}:${CONTROLLER_ADMIN_PORT}/metrics`;
        const heap = v8HeapMiB(await nodeNetText(c, url).catch(() => ""));
        for (const [k, v] of Object.entries(heap)) {
          controllerHeapMiB[k] = Math.round(((controllerHeapMiB[k] ?? 0) + v) * 10) / 10;
        }
      }
      out.push({
        atS: Math.round((Date.now() - t0) / 1000),
        rssMiB,
        anonMiB,
        agentHeapMiB,
        controllerHeapMiB,
        agentProgramsAnonMiB,
      });
    } catch { /* the API server is away (its restart): the next sample */ }
    await sleep(5_000);
  }
}

/** Per component, the median RSS of the last fifth of the samples over that of the second fifth. */
export function rssGrowth(samples: readonly RssSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  const n = samples.length, fifth = Math.max(1, Math.floor(n / 5));
  if (n < 5) return out;
  for (const name of Object.keys(samples[0].rssMiB)) {
    const at = (xs: readonly RssSample[]) => median(xs.map((s) => s.rssMiB[name] ?? 0));
    const warm = at(samples.slice(fifth, 2 * fifth)), last = at(samples.slice(n - fifth));
    out[name] = warm > 0 ? Math.round((last / warm) * 1000) / 1000 : 1;
  }
  return out;
}

/**
 * RSS growth is judged only for a soak this long (seconds): in a shorter one the warm-up and the
 * processes' own replacements (a restarted controller lists everything again) are most of it.
 */
export const RSS_CHECK_MIN_SECONDS = 600;

/** The problems of a finished soak (empty: it passed). */
export function soakProblems(r: Omit<SoakReport, "problems">): string[] {
  const out: string[] = [];
  for (const [lane, l] of [["mesh", r.mesh], ["edge", r.edge]] as const) {
    if (l.failed > 0) {
      out.push(
        `${lane}: ${l.failed} of ${l.sent} requests failed (${JSON.stringify(l.statuses)}; ` +
          `first: ${JSON.stringify(l.failures?.slice(0, 5) ?? l.errors)})`,
      );
    }
    if (l.sent === 0) out.push(`${lane}: no request was sent`);
  }
  for (const e of r.events) if (e.error) out.push(`${e.action} at ${e.atS} s: ${e.error}`);
  for (const [name, g] of Object.entries(r.growth)) {
    if (r.seconds < RSS_CHECK_MIN_SECONDS) break;
    if (g > 1.1) out.push(`${name}: RSS grew ×${g} after warm-up (limit ×1.1)`);
  }
  return out;
}

/** Runs the soak on `c` (aether installed fresh; removed after). */
export async function runSoak(c: Cluster, o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? (() => {});
  const churn = o.mode === "churn";
  const rate = o.rate ?? 50, intervalS = o.intervalS ?? (churn ? 1 : 20);
  const env = await setUp(c);
  const dir = await Deno.makeTempDir({ prefix: "aether-soak-" });
  try {
    await env.k(["patch", "deployment/web", "--type=strategic", "-p", GRACEFUL_WEB]);
    await rollout(c.kubeconfig, "default", "deployment/web");
    const edgeService = async () =>
      (await env.json(["-n", releaseNs, "get", "service", "-l", COMPONENTS.edge])).items[0];
    const lb = await waitFor(
      "the edge's LoadBalancer address",
      async () =>
        (await edgeService())?.status?.loadBalancer?.ingress?.[0]?.ip as string | undefined,
    );
    const edgeEnv = { ...env, edgeIp: lb };
    await waitEdit(edgeEnv, "0");
    const stopFile = join(dir, "stop");
    const t0 = Date.now();
    const mesh = startLoad(edgeEnv, "mesh", stopFile, rate);
    const edge = startLoad(edgeEnv, "edge", stopFile, rate);
    const rss: RssSample[] = [];
    let stopped = false;
    const sampling = sampleRss(c, env, t0, rss, () => stopped);
    const events: SoakEvent[] = [];
    const actions: [string, () => Promise<void | "skipped">][] = churn
      ? churnSchedule(c, edgeEnv)
      : schedule(c, edgeEnv, `deployment/${(await edgeService()).metadata.name}`);
    try {
      for (let i = 0; Date.now() - t0 < o.seconds * 1000; i++) {
        const [action, run] = actions[i % actions.length];
        const start = Date.now();
        const atS = Math.round((start - t0) / 1000);
        try {
          if (await run() === "skipped") continue;
          events.push({ atS, action, ms: Date.now() - start });
        } catch (e) {
          events.push({ atS, action, ms: Date.now() - start, error: (e as Error).message });
        }
        if (!churn || i % 60 === 0) log(`${atS} s: ${action} (${Date.now() - start} ms)`);
        const next = start + intervalS * 1000;
        if (next > Date.now()) await sleep(next - Date.now());
      }
    } finally {
      await Deno.writeTextFile(stopFile, "");
      stopped = true;
    }
    const [meshResult, edgeResult] = await Promise.all([mesh.done, edge.done]);
    await sampling;
    const seconds = Math.round((Date.now() - t0) / 1000);
    const report = {
      seconds,
      mesh: meshResult,
      edge: edgeResult,
      events,
      rss,
      growth: rssGrowth(rss),
    };
    return { ...report, problems: soakProblems(report) };
  } finally {
    await env.cleanup();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
