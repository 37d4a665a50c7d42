/**
 * The aether controller: `controller --kubeconfig <file>` (or `--in-cluster`). Leader-elected on a
 * Lease; writes Gateway API and GAMMA status. See docs/kubernetes.md.
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { runMain, untilSignal } from "../lib/cli/mod.ts";
import { addProcessMetrics, Registry } from "../lib/metrics/mod.ts";
import { startMemoryTrim } from "../lib/memory/trim.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { controllerDefaults as d, edgeIdentityFlags, runController } from "./mod.ts";
import { podWebhookDefaults } from "./webhook/mod.ts";
import { mcsFlags, podWebhookFlags, positive, seconds, wholeNumber } from "./flags.ts";

const w = podWebhookDefaults("");

const usage = `usage: controller (--kubeconfig <file> | --in-cluster) [flags]
       controller spire-registrar --help   (SPIRE entries per ServiceAccount, beside spire-server)

flags:
  --kubeconfig <file>          API server to read and write (or --in-cluster)
  --kube-context <name>        kubeconfig context (default: its current-context)
  --in-cluster                 use the pod's service account
  --controller-name <name>     GatewayClass controllerName claimed (default ${d.controllerName})
  --mesh-controller-name <n>   controllerName of mesh (Service parent) status and of the XMesh
                               objects accepted (default ${d.meshControllerName})
  --transparent-capture        the node agents capture pods' traffic (the chart's agent.gamma and
                               transparentCapture): XMesh status lists the mesh features
  --gateway-address <ip>       address written to Gateway status.addresses (default ${d.gatewayAddress})
  --lease-namespace <ns>       namespace of the leader Lease (default ${d.leaseNamespace})
  --lease-name <name>          leader Lease name (default ${d.leaseName})
  --identity <id>              this candidate (default $POD_NAME, else host name + random suffix)
  --lease-duration <s>         seconds a Lease is held without renewal (default ${
  d.leaseDurationMs / 1000
})
  --renew-deadline <s>         a leader that cannot renew for this long steps down (default ${
  d.renewDeadlineMs / 1000
})
  --retry-period <s>           seconds between election attempts and renewals (default ${
  d.retryPeriodMs / 1000
})
  --status-qps <n>             status writes per second, sustained (default ${d.statusQps}); a 429
                               from the API server's priority and fairness pauses them as it asks
  --status-burst <n>           status writes allowed in a burst above it (default ${d.statusBurst})
  --status-concurrency <n>     status writes in flight at most (default ${d.statusConcurrency})
  --admin-address <h:p>        /healthz /readyz (503 while the API server has not answered a
                               watched kind for 30 s) /status /metrics (default 127.0.0.1:15010)
  --edge-namespace <ns>        run each Gateway's edge (Deployment + LoadBalancer Service) here;
                               Gateway addresses then come from the Service (default: no edges)
  --edge-image <ref>           image of the edge pods (default aether.local/aether:dev)
  --edge-service-account <sa>  ServiceAccount of the edge pods (default aether-edge)
  --edge-spire-socket-dir <d>  host folder of the node's SPIRE agent Workload API socket
                               (api.sock), mounted into every edge pod: each edge gets its own
                               SVID and dials pods over SPIFFE mTLS (needs --edge-trust-domain)
  --edge-trust-domain <td>     the SPIFFE trust domain of the edges' mTLS hops
  --edge-outside-mesh-namespaces <list>  comma-separated namespaces whose pods the edges dial as
                               they are (outside the mesh: never captured), not over mTLS
  --edge-address-pools <list>  comma-separated CIDRs the cluster's LoadBalancer assigns from; a
                               Gateway spec.address outside them is AddressNotUsable (default: any)
  --edge-scoped-routes-at <n>  each edge's --scoped-routes-at: a listener with this many exact
                               hostnames or more gets a route table per host (default: the
                               agent's, 2000; 0 = never)
  --edge-scoped-routes-on-demand  each edge's --scoped-routes-on-demand: Envoy fetches a host's
                               table on its first request (default off)
  --pod-ndots-webhook          serve the pod-ndots mutating webhook (default off: the API server
                               must reach this process; the chart sets it with injectPodNdots)
  --webhook-address <h:p>      its HTTPS address (default ${w.hostname}:${w.port})
  --webhook-namespace <ns>     where its Secret and Service are; never mutated (default the
                               --lease-namespace)
  --webhook-service <name>     the Service the API server calls (default ${w.serviceName})
  --webhook-secret <name>      Secret of its certificate, made and renewed here (default ${w.secretName})
  --webhook-configuration <n>  MutatingWebhookConfiguration whose caBundle is kept current
                               (default ${w.configName})
  --pod-ndots <n>              the ndots written (default ${w.ndots})
  --webhook-excluded-namespaces <list>  comma-separated namespaces never mutated besides the
                               webhook's own (default ${w.excludedNamespaces.join(",")})
  --registry-url <url>         the clusterset registry's etcd client URL (its own etcd, never the
                               API server's): turns on Multi-Cluster Services (ServiceExport →
                               registry → ServiceImport in every cluster); needs --region, --cluster
  --region <name>              this cluster's region (a DNS label)
  --cluster <name>             this cluster's name in the region (a DNS label); MCS cluster id
                               <cluster>.<region>
  --registry-lease-ttl <s>     seconds this cluster's registry keys outlive a dead controller
                               (default 10)
  --trust-domain <td>          this cluster's SPIFFE trust domain: its registry endpoints carry
                               their SPIFFE ID (spiffe://<td>/ns/<ns>/sa/<sa>)
  --east-west-gateway <ip:port> this cluster's east-west gateway (agent east-west-gateway):
                               every registry endpoint carries it, and other clusters dial it
                               instead of the pods (no pod-network routes between clusters)
`;

async function main(args: string[]): Promise<number> {
  if (args[0] === "spire-registrar") {
    return await (await import("./registrar/mod.ts")).run(args.slice(1));
  }
  const { values } = parseArgs({
    args,
    options: {
      kubeconfig: { type: "string" },
      "kube-context": { type: "string" },
      "in-cluster": { type: "boolean" },
      "controller-name": { type: "string", default: d.controllerName },
      "mesh-controller-name": { type: "string", default: d.meshControllerName },
      "transparent-capture": { type: "boolean" },
      "gateway-address": { type: "string", default: d.gatewayAddress },
      "lease-namespace": { type: "string", default: d.leaseNamespace },
      "lease-name": { type: "string", default: d.leaseName },
      identity: { type: "string" },
      "lease-duration": { type: "string" },
      "renew-deadline": { type: "string" },
      "retry-period": { type: "string" },
      "status-qps": { type: "string" },
      "status-burst": { type: "string" },
      "status-concurrency": { type: "string" },
      "admin-address": { type: "string", default: "127.0.0.1:15010" },
      "edge-namespace": { type: "string" },
      "edge-image": { type: "string", default: "aether.local/aether:dev" },
      "edge-service-account": { type: "string", default: "aether-edge" },
      "edge-address-pools": { type: "string" },
      "edge-scoped-routes-at": { type: "string" },
      "edge-scoped-routes-on-demand": { type: "boolean" },
      "edge-spire-socket-dir": { type: "string" },
      "edge-trust-domain": { type: "string" },
      "edge-outside-mesh-namespaces": { type: "string" },
      "pod-ndots-webhook": { type: "boolean" },
      "webhook-address": { type: "string", default: `${w.hostname}:${w.port}` },
      "webhook-namespace": { type: "string" },
      "webhook-service": { type: "string", default: w.serviceName },
      "webhook-secret": { type: "string", default: w.secretName },
      "webhook-configuration": { type: "string", default: w.configName },
      "pod-ndots": { type: "string" },
      "webhook-excluded-namespaces": { type: "string", default: w.excludedNamespaces.join(",") },
      "registry-url": { type: "string" },
      region: { type: "string" },
      cluster: { type: "string" },
      "registry-lease-ttl": { type: "string" },
      "trust-domain": { type: "string" },
      "east-west-gateway": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.error(usage);
    return 0;
  }
  if (!values.kubeconfig === !values["in-cluster"]) {
    console.error(`controller: give one of --kubeconfig <file> and --in-cluster\n\n${usage}`);
    return 2;
  }
  const leaseDurationMs = seconds("lease-duration", values["lease-duration"], d.leaseDurationMs);
  const renewDeadlineMs = seconds("renew-deadline", values["renew-deadline"], d.renewDeadlineMs);
  const retryPeriodMs = seconds("retry-period", values["retry-period"], d.retryPeriodMs);
  if (!(renewDeadlineMs < leaseDurationMs && retryPeriodMs < renewDeadlineMs)) {
    throw new Error("need --retry-period < --renew-deadline < --lease-duration");
  }
  const logger = new Logger("controller");
  const metrics = new Registry();
  // process_resident_memory_bytes, process_cpu_seconds_total, deno_heap_used_bytes… on /metrics.
  addProcessMetrics(metrics);
  // Freed native heap back to the kernel every 10 s (AETHER_MEMORY_TRIM_SECONDS).
  startMemoryTrim({ metrics, logger });
  const client = new KubeClient(
    values["in-cluster"]
      ? { inCluster: true }
      : { kubeconfig: values.kubeconfig!, context: values["kube-context"] },
  );
  const identity = values.identity ?? Deno.env.get("POD_NAME") ??
    `${Deno.hostname()}-${crypto.randomUUID().slice(0, 8)}`;
  const controller = await runController({
    client,
    controllerName: values["controller-name"]!,
    meshControllerName: values["mesh-controller-name"]!,
    transparentCapture: values["transparent-capture"] === true,
    gatewayAddress: values["gateway-address"]!,
    leaseNamespace: values["lease-namespace"]!,
    leaseName: values["lease-name"]!,
    identity,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    statusQps: positive("status-qps", values["status-qps"], d.statusQps),
    statusBurst: positive("status-burst", values["status-burst"], d.statusBurst),
    statusConcurrency: positive(
      "status-concurrency",
      values["status-concurrency"],
      d.statusConcurrency,
    ),
    logger,
    metrics,
    ...(values["edge-namespace"]
      ? {
        edge: {
          namespace: values["edge-namespace"],
          image: values["edge-image"]!,
          serviceAccount: values["edge-service-account"]!,
          addressPools: (values["edge-address-pools"] ?? "").split(",").map((s) => s.trim())
            .filter(Boolean),
          ...(values["edge-scoped-routes-at"] === undefined ? {} : {
            scopedRoutesAt: wholeNumber("edge-scoped-routes-at", values["edge-scoped-routes-at"]),
          }),
          ...(values["edge-scoped-routes-on-demand"] ? { scopedRoutesOnDemand: true } : {}),
          ...edgeIdentityFlags(
            values["edge-spire-socket-dir"],
            values["edge-trust-domain"],
            (values["edge-outside-mesh-namespaces"] ?? "").split(",").map((s) => s.trim())
              .filter(Boolean),
          ),
          ...(values["registry-url"]
            ? {
              clusterset: {
                registryUrl: values["registry-url"],
                region: values.region ?? "",
                cluster: values.cluster ?? "",
              },
            }
            : {}),
        },
      }
      : {}),
    ...(values["pod-ndots-webhook"]
      ? { podWebhook: podWebhookFlags(values, values["lease-namespace"]!) }
      : {}),
    ...mcsFlags(values),
  });
  const [hostname, port] = values["admin-address"]!.split(/:(?=\d+$)/);
  const admin = Deno.serve({ hostname, port: Number(port), onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/healthz") return new Response("ok\n");
    if (path === "/readyz") {
      const r = controller.ready();
      return new Response(`${r.detail}\n`, { status: r.ready ? 200 : 503 });
    }
    if (path === "/metrics") return new Response(metrics.render());
    if (path === "/status") return Response.json(controller.status());
    return new Response("not found\n", { status: 404 });
  });
  logger.info("controller running", { identity, admin: values["admin-address"] });
  return await untilSignal(logger, "shutting down (releasing the Lease)", async () => {
    await controller.close();
    await admin.shutdown();
  });
}

if (import.meta.main) await runMain("controller", main);
