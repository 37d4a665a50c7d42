/**
 * The controller alone at scale, on a real kube-apiserver (+ etcd): its process started as the
 * chart starts it (`deno run -A controller/main.ts`, its default flags unless given), one Gateway,
 * then `routes` HTTPRoutes created in a burst (16 creates in flight) and timed from the first create
 * to every one of them `Accepted` (the API server listed every 200 ms); the controller's RSS before,
 * at its peak (VmHWM) and settled (30 s after the last change); then `samples` more routes created one at a time, each timed
 * from its create call to `Accepted` (GET every 20 ms). No kubelet and no edge pods: this is the
 * controller's share of issue 21's figures (`bench/cluster_routes.ts` is the whole cluster's).
 *
 * deno run -A bench/controller_scale.ts [routes=1000] [samples=60] [-- controller flags…]
 * (one JSON line)
 * @module
 */
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { installCrds, type Kube, startKube } from "../e2e/peers/kube.ts";
import { freePort } from "../e2e/peers/proc.ts";
import { gateway, gatewayClass } from "../testbed/fixtures/objects.ts";

const dash = Deno.args.indexOf("--");
const own = dash < 0 ? Deno.args : Deno.args.slice(0, dash);
const controllerFlags = dash < 0 ? [] : Deno.args.slice(dash + 1);
const routes = Number(own[0] ?? 1000);
const samples = Number(own[1] ?? 60);
const GW = "/apis/gateway.networking.k8s.io/v1";
const ROUTES = `${GW}/namespaces/default/httproutes`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// deno-lint-ignore no-explicit-any
type Any = any;

const route = (name: string) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: "default" },
  spec: {
    parentRefs: [{ name: "bench" }],
    hostnames: [`${name}.bench.example`],
    rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
  },
});

const accepted = (o: Any) =>
  o?.status?.parents?.some((p: Any) =>
    p.controllerName === "gateway.aether.io/edge" &&
    p.conditions?.some((c: Any) => c.type === "Accepted" && c.status === "True")
  ) === true;

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]);
};

/** VmRSS and VmHWM of a process, MiB. */
async function memory(pid: number): Promise<{ rss: number; hwm: number }> {
  const text = await Deno.readTextFile(`/proc/${pid}/status`);
  const kib = (key: string) => Number(text.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1] ?? 0);
  return { rss: Math.round(kib("VmRSS") / 1024), hwm: Math.round(kib("VmHWM") / 1024) };
}

/** CPU seconds (user + system) a process has used. */
async function cpuSeconds(pid: number): Promise<number> {
  const f = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function must(kube: Kube, method: string, path: string, body?: unknown): Promise<Any> {
  for (let attempt = 0;; attempt++) {
    const res = await kube.request(method, path, body);
    if (res.status < 300) return res.json;
    // The API server's priority and fairness may ask a burst to wait.
    if (res.status === 429 && attempt < 20) {
      await sleep(200);
      continue;
    }
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
  }
}

async function waitUntil(what: string, f: () => Promise<boolean>, ms: number, every = 200) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await f().catch(() => false)) return;
    await sleep(every);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

const dir = await Deno.makeTempDir({ prefix: "aether-bench-controller-" });
const kube = await startKube(dir);
let child: Deno.ChildProcess | undefined;
try {
  await installCrds(kube, join(await ensurePeer("gateway-api-crds"), "standard"));
  await must(kube, "POST", "/api/v1/namespaces", { metadata: { name: "aether-system" } });
  await must(kube, "POST", `${GW}/gatewayclasses`, gatewayClass());
  await must(
    kube,
    "POST",
    `${GW}/namespaces/default/gateways`,
    gateway("bench", [{ name: "http", port: 80, protocol: "HTTP" }]),
  );
  await must(kube, "POST", "/api/v1/namespaces/default/services", {
    metadata: { name: "web" },
    spec: { ports: [{ name: "http", port: 8080 }] },
  });

  const admin = `127.0.0.1:${freePort()}`;
  child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "controller/main.ts",
      `--kubeconfig=${kube.kubeconfig}`,
      `--admin-address=${admin}`,
      ...controllerFlags,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const pid = child.pid;
  await waitUntil("the Gateway Accepted", async () => {
    const gw = await must(kube, "GET", `${GW}/namespaces/default/gateways/bench`);
    return gw.status?.conditions?.some((c: Any) => c.type === "Accepted" && c.status === "True") ===
      true;
  }, 60_000);
  await sleep(2000);
  const before = await memory(pid);
  const cpuBefore = await cpuSeconds(pid);

  // The burst: `routes` creates, 16 in flight; then every one Accepted.
  let peakRss = before.rss;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakRss = Math.max(peakRss, (await memory(pid)).rss);
      await sleep(100);
    }
  })();
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < routes) {
      const i = next++;
      await must(kube, "POST", ROUTES, route(`r${i}`));
    }
  }));
  const createdMs = performance.now() - started;
  let acceptedCount = 0;
  await waitUntil(`${routes} routes Accepted`, async () => {
    const list = await must(kube, "GET", ROUTES);
    acceptedCount = list.items.filter(accepted).length;
    return acceptedCount >= routes;
  }, 600_000);
  const allAcceptedMs = performance.now() - started;
  const burstCpu = await cpuSeconds(pid) - cpuBefore;

  // One more route at a time.
  const one: number[] = [];
  for (let i = 0; i < samples; i++) {
    const name = `one${i}`;
    const t0 = performance.now();
    await must(kube, "POST", ROUTES, route(name));
    await waitUntil(
      `${name} Accepted`,
      async () => {
        const res = await kube.request("GET", `${ROUTES}/${name}`);
        return accepted(res.json);
      },
      60_000,
      20,
    );
    one.push(performance.now() - t0);
    await sleep(100);
  }
  sampling = false;
  await sampler;
  // Settled: after half a minute without changes (V8's memory reducer acts on idle heaps).
  await sleep(30_000);
  const settled = await memory(pid);
  const metrics = await (await fetch(`http://${admin}/metrics`)).text();
  const writes = metrics.split("\n")
    .filter((l) => l.startsWith("aether_controller_status_writes_total{"))
    .reduce((n, l) => n + Number(l.split(" ").pop()), 0);
  console.log(JSON.stringify({
    routes,
    samples,
    controllerFlags: controllerFlags.join(" "),
    v8Flags: Deno.env.get("DENO_V8_FLAGS") ?? "",
    createdS: +(createdMs / 1000).toFixed(1),
    allAcceptedS: +(allAcceptedMs / 1000).toFixed(1),
    burstCpuS: +burstCpu.toFixed(1),
    rssBeforeMiB: before.rss,
    rssPeakMiB: Math.max(peakRss, settled.hwm),
    rssSettledMiB: settled.rss,
    oneAcceptedP50Ms: pct(one, 0.5),
    oneAcceptedP99Ms: pct(one, 0.99),
    statusWrites: writes,
  }));
} finally {
  try {
    child?.kill("SIGTERM");
    await child?.status;
  } catch { /* already gone */ }
  await kube.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
