/**
 * `controller spire-registrar`: the SPIRE registrar as a sidecar of spire-server. Watches the
 * cluster's ServiceAccounts and keeps one SPIRE entry per ServiceAccount (plus the cluster's node
 * alias) on the server's private socket. See docs/identity.md.
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../../lib/log/mod.ts";
import { untilSignal } from "../../lib/cli/mod.ts";
import { addProcessMetrics, Registry } from "../../lib/metrics/mod.ts";
import { startMemoryTrim } from "../../lib/memory/trim.ts";
import { KubeClient } from "../../lib/kube/mod.ts";
import { SpireEntryClient } from "./client.ts";
import { checkIdentityInput } from "./entries.ts";
import { Registrar } from "./registrar.ts";
import { ServiceAccountWatch } from "./service_accounts.ts";

/** Flag defaults. */
export const registrarDefaults = {
  serverSocket: "/tmp/spire-server/private/api.sock",
  svidTtl: "1h",
  excludeNamespaces: "kube-system,kube-public,kube-node-lease",
  adminAddress: "127.0.0.1:15011",
  resync: "60s",
} as const;

const d = registrarDefaults;

const usage = `usage: controller spire-registrar (--kubeconfig <file> | --in-cluster) \\
         --trust-domain <td> --cluster-name <name> [flags]

Keeps the SPIRE server's entries equal to one per Kubernetes ServiceAccount
(spiffe://<td>/ns/<ns>/sa/<sa>, selectors k8s:ns:<ns> k8s:sa:<sa>) under one node alias
(spiffe://<td>/aether/cluster/<name>, selector k8s_psat:cluster:<name>). Only entries with
hint "aether" are changed or deleted.

flags:
  --kubeconfig <file>          API server to watch (or --in-cluster)
  --kube-context <name>        kubeconfig context (default: its current-context)
  --in-cluster                 use the pod's service account
  --server-socket <path>       spire-server's private API socket
                               (default ${d.serverSocket})
  --trust-domain <td>          SPIRE's trust domain, e.g. cluster.local (required)
  --cluster-name <name>        the k8s_psat cluster name the agents attest with (required)
  --svid-ttl <duration>        X.509-SVID TTL of the entries: 90s, 30m, 1h, 1h30m
                               (default ${d.svidTtl})
  --exclude-namespaces <list>  comma-separated namespaces whose ServiceAccounts get no entry
                               (default ${d.excludeNamespaces}; "" for none)
  --resync <duration>          pass period without changes (default ${d.resync})
  --admin-address <h:p>        /healthz /readyz /metrics (default ${d.adminAddress})
`;

/** `90s`, `30m`, `1h30m`, `2h` or plain seconds → seconds; throws on anything else. */
export function parseDurationSeconds(flag: string, v: string): number {
  const plain = Number(v);
  if (v.trim() !== "" && Number.isFinite(plain)) {
    if (plain > 0 && Number.isInteger(plain)) return plain;
  } else {
    const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(v);
    if (m && (m[1] || m[2] || m[3])) {
      const s = Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
      if (s > 0) return s;
    }
  }
  throw new Error(`--${flag} must be a positive duration like 90s, 30m or 1h, got ${v}`);
}

/** Runs the registrar until SIGINT/SIGTERM. */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      kubeconfig: { type: "string" },
      "kube-context": { type: "string" },
      "in-cluster": { type: "boolean" },
      "server-socket": { type: "string", default: d.serverSocket },
      "trust-domain": { type: "string" },
      "cluster-name": { type: "string" },
      "svid-ttl": { type: "string", default: d.svidTtl },
      "exclude-namespaces": { type: "string", default: d.excludeNamespaces },
      resync: { type: "string", default: d.resync },
      "admin-address": { type: "string", default: d.adminAddress },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.error(usage);
    return 0;
  }
  if (!values.kubeconfig === !values["in-cluster"]) {
    console.error(`spire-registrar: give one of --kubeconfig <file> and --in-cluster\n\n${usage}`);
    return 2;
  }
  const trustDomain = values["trust-domain"], clusterName = values["cluster-name"];
  if (!trustDomain || !clusterName) {
    console.error(`spire-registrar: --trust-domain and --cluster-name are required\n\n${usage}`);
    return 2;
  }
  checkIdentityInput(trustDomain, clusterName);
  const svidTtlSeconds = parseDurationSeconds("svid-ttl", values["svid-ttl"]!);
  if (svidTtlSeconds > 2 ** 31 - 1) throw new Error("--svid-ttl is too long");
  const resyncMs = parseDurationSeconds("resync", values.resync!) * 1000;
  const excludeNamespaces = values["exclude-namespaces"]!.split(",").map((s) => s.trim())
    .filter(Boolean);
  const [hostname, port] = values["admin-address"]!.split(/:(?=\d+$)/);
  if (!port) throw new Error(`--admin-address must be host:port, got ${values["admin-address"]}`);

  const logger = new Logger("controller.spire-registrar");
  const metrics = new Registry();
  addProcessMetrics(metrics);
  // Freed native heap back to the kernel every 10 s (AETHER_MEMORY_TRIM_SECONDS).
  startMemoryTrim({ metrics, logger });
  const socket = values["server-socket"]!;
  const client = new KubeClient(
    values["in-cluster"]
      ? { inCluster: true }
      : { kubeconfig: values.kubeconfig!, context: values["kube-context"] },
  );
  const registrar = new Registrar({
    connect: () => new SpireEntryClient(socket),
    serviceAccounts: () => watch.list(),
    trustDomain,
    clusterName,
    svidTtlSeconds,
    excludeNamespaces,
    resyncMs,
    logger,
    metrics,
  });
  const watch = new ServiceAccountWatch({
    client,
    logger: logger.child("kube"),
    metrics,
    onChange: () => registrar.notify(),
  });
  registrar.start();
  // An empty first list changes nothing in the store and so calls no onChange.
  const listed = watch.start().then(() => registrar.notify());

  const admin = Deno.serve({ hostname, port: Number(port), onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/healthz") return new Response("ok\n");
    if (path === "/readyz") {
      const r = watch.list() === undefined
        ? { ready: false, detail: "waiting for the first ServiceAccount list" }
        : registrar.readiness();
      return new Response(`${r.detail}\n`, { status: r.ready ? 200 : 503 });
    }
    if (path === "/metrics") return new Response(metrics.render());
    return new Response("not found\n", { status: 404 });
  });
  logger.info("SPIRE registrar running", {
    socket,
    trustDomain,
    clusterName,
    svidTtlSeconds,
    excludeNamespaces,
    admin: values["admin-address"],
  });
  return await untilSignal(logger, "shutting down", async () => {
    await watch.stop();
    await listed;
    await registrar.stop();
    client.close();
    await admin.shutdown();
  });
}
