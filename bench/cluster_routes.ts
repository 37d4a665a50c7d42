/**
 * aether on the local cluster with `routes` HTTPRoutes on one Gateway: the controller's and the
 * edge pod's (agent + Envoy) RSS and CPU, then `samples` more routes created one at a time, each
 * timed from its create call to `Accepted` (the controller's status write, seen by polling the API
 * server every 20 ms) and to the first 200 through the Gateway's edge (polled every 20 ms).
 *
 * sudo -E deno run -A bench/cluster_routes.ts [routes=1000] [samples=60]   (one JSON line)
 * @module
 */
import { withCluster } from "../testbed/cluster/mod.ts";
import { openApi } from "../testbed/cluster/mod.ts";
import { request } from "../e2e/http_client.ts";
import { podUsage, releaseNs, setUp, waitFor } from "../e2e/cluster_ha.ts";

const routes = Number(Deno.args[0] ?? 1000);
const samples = Number(Deno.args[1] ?? 60);
const base = "/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes";

const route = (name: string) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: "default", labels: { "bench.aether.io/routes": "1" } },
  spec: {
    parentRefs: [{ name: "ha" }],
    hostnames: [`${name}.bench.example`],
    rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
  },
});

// deno-lint-ignore no-explicit-any
const accepted = (o: any) =>
  o?.status?.parents?.some((
    p: { controllerName: string; conditions?: { type: string; status: string }[] },
  ) =>
    p.controllerName === "gateway.aether.io/edge" &&
    p.conditions?.some((c) => c.type === "Accepted" && c.status === "True")
  ) === true;

const usage = podUsage;

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const result = await withCluster(async (c) => {
  const env = await setUp(c);
  const api = await openApi(c.kubeconfig);
  try {
    const podUid = async (selector: string) =>
      (await env.json(["-n", releaseNs, "get", "pods", "-l", selector])).items
        .find((p: { metadata: { deletionTimestamp?: string } }) => !p.metadata.deletionTimestamp)
        .metadata.uid as string;
    const controller = await podUid("app.kubernetes.io/component=controller");
    const edge = await podUid("gateway.aether.io/gateway=default.ha");
    const before = { controller: await usage(controller), edge: await usage(edge) };

    // `routes` HTTPRoutes, 16 creates in flight.
    const started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < routes) {
        const name = `r${next++}`;
        const r = await api.request("POST", base, route(name));
        if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
      }
    }));
    const createdMs = performance.now() - started;
    await waitFor(`${routes} routes Accepted`, async () => {
      const list = await api.request("GET", `${base}?labelSelector=bench.aether.io/routes`);
      return list.json.items.filter(accepted).length >= routes ? true : undefined;
    }, 900_000);
    const allAcceptedMs = performance.now() - started;
    await waitFor("the last route serving", async () => {
      const r = await request({
        host: env.edgeIp,
        port: 18080,
        authority: `r${routes - 1}.bench.example`,
        timeoutMs: 5000,
      });
      return r.status === 200 ? true : undefined;
    }, 900_000);
    const allServingMs = performance.now() - started;
    const loaded = { controller: await usage(controller), edge: await usage(edge) };

    // Steady state with the routes in place: 30 s of idle CPU.
    const idleStart = { controller: await usage(controller), edge: await usage(edge) };
    await sleep(30_000);
    const idleEnd = { controller: await usage(controller), edge: await usage(edge) };

    // One route at a time: create → Accepted, create → first 200 through the edge.
    const toAccepted: number[] = [], toServing: number[] = [];
    for (let i = 0; i < samples; i++) {
      const name = `s${i}`;
      const t0 = performance.now();
      const r = await api.request("POST", base, route(name));
      if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
      let acc: number | undefined, ok: number | undefined;
      const deadline = t0 + 120_000;
      while ((acc === undefined || ok === undefined) && performance.now() < deadline) {
        const [o, h] = await Promise.all([
          acc === undefined ? api.request("GET", `${base}/${name}`) : undefined,
          ok === undefined
            ? request({
              host: env.edgeIp,
              port: 18080,
              authority: `${name}.bench.example`,
              timeoutMs: 5000,
            }).catch(() => undefined)
            : undefined,
        ]);
        const now = performance.now() - t0;
        if (acc === undefined && accepted(o?.json)) acc = now;
        if (ok === undefined && h?.status === 200) ok = now;
        await sleep(20);
      }
      if (acc === undefined || ok === undefined) {
        throw new Error(`route ${name} not ready in 120 s`);
      }
      toAccepted.push(acc);
      toServing.push(ok);
    }
    const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
    const idlePct = (k: "controller" | "edge") =>
      Math.round((idleEnd[k].cpuS - idleStart[k].cpuS) / 30 * 1000) / 10;
    return {
      routes,
      samples,
      createdMs: Math.round(createdMs),
      allAcceptedMs: Math.round(allAcceptedMs),
      allServingMs: Math.round(allServingMs),
      controllerRssMiB: loaded.controller.rssMiB,
      controllerRssBeforeMiB: before.controller.rssMiB,
      controllerCpuS: Math.round((loaded.controller.cpuS - before.controller.cpuS) * 10) / 10,
      controllerIdleCpuPct: idlePct("controller"),
      edgeRssMiB: loaded.edge.rssMiB,
      edgeRssBeforeMiB: before.edge.rssMiB,
      // Anonymous memory apart (file pages are the shared deno/envoy binaries), per program.
      edgeAnonMiB: loaded.edge.anonMiB,
      edgeByProgram: loaded.edge.byProgram,
      edgeByProgramBefore: before.edge.byProgram,
      // After the 30 s idle: what the pods hold once the burst is over.
      controllerSettledRssMiB: idleEnd.controller.rssMiB,
      edgeSettledRssMiB: idleEnd.edge.rssMiB,
      edgeSettledByProgram: idleEnd.edge.byProgram,
      edgeCpuS: Math.round((loaded.edge.cpuS - before.edge.cpuS) * 10) / 10,
      edgeIdleCpuPct: idlePct("edge"),
      acceptedP50Ms: pct(toAccepted, 0.5),
      acceptedP99Ms: pct(toAccepted, 0.99),
      servingP50Ms: pct(toServing, 0.5),
      servingP99Ms: pct(toServing, 0.99),
      loadAverage: load,
    };
  } finally {
    await api.request("DELETE", `${base}?labelSelector=bench.aether.io/routes`).catch(() => {});
    api.close();
    await env.cleanup();
  }
});
console.log(JSON.stringify(result));
