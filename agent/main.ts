/**
 * The aether agent.
 * - `agent standalone --config <dir|file>`: the bare-metal edge — Gateway API YAML in, xDS out to
 *   its Envoy. See docs/standalone.md for the stable contract.
 * - `agent node --config <dir|file> --node-name <n>`: the node proxy for east-west (GAMMA) traffic.
 *   See docs/mesh.md.
 * - Both read the API server instead with `--kubeconfig <file>` or `--in-cluster`
 *   (docs/kubernetes.md).
 * - `agent east-west-gateway --registry-url … --listen <host:port>`: this cluster's east-west
 *   gateway (agent/east_west). See docs/multicluster.md.
 * - `agent translate --config <dir|file>`: prints the xDS resources for a config and exits
 *   (agent/offline). See docs/standalone.md.
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { runMain } from "../lib/cli/mod.ts";
import { standaloneDefaults } from "./edge/defaults.ts";
import { limitFlagSpecs, limitFlagsUsage, limitsFromFlags } from "./limits_flags.ts";
import { sourceFlagsError } from "./config_source.ts";
import { defaultStateDir } from "./envoy/state.ts";

const usage =
  `usage: agent standalone (--config <dir|file> | --kubeconfig <file> | --in-cluster) [flags]
       agent node (--config <dir|file> | --kubeconfig <file> | --in-cluster) --node-name <name> [flags]
       agent translate --config <dir|file> [--role edge|node] [--output yaml|json] [--status]
       agent stop [--state-dir <dir> | --node-id <id>] [--keep-envoy]
       agent east-west-gateway --registry-url <url> --region <r> --cluster <c> --listen <h:p>
       agent bootstrap --node-name <name> [--xds-address <h:p>] [--envoy-admin-address <h:p>]

flags:
  --config <path>          folder (read recursively) or file of Gateway API YAML; watched for changes
  --kubeconfig <file>      read Gateway API and core objects from this kubeconfig's API server
  --kube-context <name>    kubeconfig context (default: its current-context)
  --in-cluster             read from the API server with the pod's service account
  --gateway <ns>/<name>    (standalone) serve only this Gateway: a per-Gateway edge in a cluster
  --envoy <path|auto|none> envoy to start (default auto: PATH, else the project's peer cache;
                           never downloads; 'deno task peers ensure envoy' installs it)
  --bind-address <ip>      address Gateway listeners bind (default ${standaloneDefaults.bindAddress})
  --usable-address <cidr>  an address or IPv4 CIDR Gateway spec.addresses may name (repeatable;
                           default: the bind address and loopback)
  --admin-address <h:p>    admin server: /healthz /readyz /status /debug/xds /metrics (default ${standaloneDefaults.adminAddress})
  --xds-address <h:p>      xDS (ADS gRPC) server (default ${standaloneDefaults.xdsAddress})
  --node-id <id>           Envoy node id (default ${standaloneDefaults.nodeId})
  --mesh-domain <domain>   mesh domain (default ${standaloneDefaults.meshDomain})
  --dns-address <h:p|none> mesh DNS responder, UDP+TCP (default ${standaloneDefaults.dnsAddress})
  --dns-upstream <ip[:p]>  forward non-mesh names here (repeatable; default: /etc/resolv.conf)
  --envoy-log-level <lvl>  Envoy log level (default warning)
  --node-name <name>       (node) this node: serves Pods with this spec.nodeName; Envoy node id
                           (default $NODE_NAME, else the host name)
  --spire-admin-socket <p> (node) SPIRE agent admin socket (Delegated Identity API): turns on
                           SPIFFE mTLS on every mesh hop (docs/identity.md); needs --trust-domain
  --spire-socket <path>    SPIFFE Workload API socket: the agent's own SVID; (standalone) the edge
                           dials pods with a known identity over mTLS presenting it
  --trust-domain <td>      SPIFFE trust domain, e.g. cluster.local
  --spiffe-id-template <t> SPIFFE ID of a service account (default spiffe://{td}/ns/{ns}/sa/{sa})
  --outside-mesh-namespace <ns>  this namespace's pods are outside the mesh (the CNI plugin's
                           excluded namespaces and aether's own): never adopted into capture, and
                           with identity their endpoints are dialled as they are (repeatable)
  --capture                (node) transparent capture: each served pod's TCP to a mesh VIP goes
                           to the node proxy (nftables in the pod's netns; docs/capture.md)
  --capture-dns <ip|ns/svc> (node, with --capture) a cluster DNS server IP, or its Service
                           (e.g. kube-system/kube-dns: its cluster IPs), whose queries from pods go
                           to this agent's --dns-address instead (repeatable)
  --cni-socket <path>      (node, with --capture) the CNI plugin's socket: pods are learnt from
                           aether's CNI plugin, each ADD waits for its capture
  --uninstall-when-gone <ns>/<daemonset>
                           (node, with --capture) on SIGTERM, remove every pod's capture table
                           when that DaemonSet is gone or being deleted (aether is being
                           uninstalled; asked of the API server); else, or with no answer, keep
  --registry-url <url>     the clusterset registry's etcd (docs/multicluster.md): ServiceImport
                           backendRefs get every exporting cluster's endpoints, this cluster's
                           first; needs --region and --cluster (this cluster's MCS id)
  --region <name>          this cluster's region (a DNS label)
  --cluster <name>         this cluster's name in the region (a DNS label)
${limitFlagsUsage}`;

async function main(args: string[]): Promise<number> {
  // Each command loads only its own modules: a cold start pays for what it runs.
  if (args[0] === "translate") {
    return await (await import("./offline/mod.ts")).translateCommand(args.slice(1));
  }
  if (args[0] === "stop") return await (await import("./stop.ts")).stopCommand(args.slice(1));
  if (args[0] === "east-west-gateway") {
    return await (await import("./east_west/mod.ts")).eastWestCommand(args.slice(1));
  }
  if (args[0] === "bootstrap") {
    return (await import("./bootstrap/mod.ts")).bootstrapCommand(args.slice(1));
  }
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      kubeconfig: { type: "string" },
      "kube-context": { type: "string" },
      "in-cluster": { type: "boolean" },
      gateway: { type: "string" },
      envoy: { type: "string", default: standaloneDefaults.envoy },
      "bind-address": { type: "string", default: standaloneDefaults.bindAddress },
      "usable-address": { type: "string", multiple: true },
      "admin-address": { type: "string", default: standaloneDefaults.adminAddress },
      "xds-address": { type: "string", default: standaloneDefaults.xdsAddress },
      "node-id": { type: "string", default: standaloneDefaults.nodeId },
      "mesh-domain": { type: "string", default: standaloneDefaults.meshDomain },
      "dns-address": { type: "string", default: standaloneDefaults.dnsAddress },
      "dns-upstream": { type: "string", multiple: true },
      "envoy-log-level": { type: "string", default: "warning" },
      "node-name": { type: "string" },
      "spire-admin-socket": { type: "string" },
      "spire-socket": { type: "string" },
      "trust-domain": { type: "string" },
      "spiffe-id-template": { type: "string" },
      "outside-mesh-namespace": { type: "string", multiple: true },
      capture: { type: "boolean" },
      "capture-dns": { type: "string", multiple: true },
      "cni-socket": { type: "string" },
      "uninstall-when-gone": { type: "string" },
      "registry-url": { type: "string" },
      region: { type: "string" },
      cluster: { type: "string" },
      help: { type: "boolean", short: "h" },
      ...limitFlagSpecs,
    },
  });
  const role = positionals[0];
  if (values.help || (role !== "standalone" && role !== "node")) {
    console.error(usage);
    return values.help ? 0 : 2;
  }
  const sourceFlags = {
    config: values.config,
    kubeconfig: values.kubeconfig,
    kubeContext: values["kube-context"],
    inCluster: values["in-cluster"],
    gateway: values.gateway,
    registryUrl: values["registry-url"],
    region: values.region,
    cluster: values.cluster,
  };
  const flagsError = sourceFlagsError(sourceFlags);
  if (flagsError) {
    console.error(`agent ${role}: ${flagsError}\n\n` + usage);
    return 2;
  }
  const logger = new Logger("agent");
  const limits = limitsFromFlags(values);
  const common = {
    ...limits,
    ...sourceFlags,
    envoy: values.envoy!,
    adminAddress: values["admin-address"]!,
    xdsAddress: values["xds-address"]!,
    meshDomain: values["mesh-domain"]!,
    dnsAddress: values["dns-address"]!,
    dnsUpstreams: values["dns-upstream"],
    envoyLogLevel: values["envoy-log-level"],
    logger,
  };
  const nodeName = values["node-name"] ?? Deno.env.get("NODE_NAME") ?? Deno.hostname();
  const nodeId = role === "node" ? nodeName : values["node-id"]!;
  const stateDir = limits.stateDir ?? defaultStateDir(nodeId);
  const nodeRole = role === "node" ? await import("./node/mod.ts") : undefined;
  const edgeRole = role === "node" ? undefined : await import("./edge/mod.ts");
  // The signal handlers come before the start (and after the last await before it): a SIGTERM once /readyz answers but before the
  // start has returned would otherwise end the process by the default action, leaving its Envoy
  // running with nobody to stop it (seen under load in e2e/edge_shutdown_drain_test.ts).
  let stopping = false;
  const stop = (keepEnvoy?: boolean) => async () => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", { keepEnvoy: keepEnvoy ?? limits.keepEnvoy });
    // A start still under way is waited for, then closed; one that failed has nothing to close.
    const started = await agent.catch(() => undefined);
    await started?.close({ keepEnvoy });
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop());
  Deno.addSignalListener("SIGTERM", stop());
  // `agent stop --keep-envoy`: exit, leave Envoy serving for the next agent.
  Deno.addSignalListener("SIGUSR1", stop(true));
  const agent = nodeRole
    ? nodeRole.runNode({
      ...common,
      stateDir,
      nodeName,
      spireAdminSocket: values["spire-admin-socket"],
      spireSocket: values["spire-socket"],
      trustDomain: values["trust-domain"],
      spiffeIdTemplate: values["spiffe-id-template"],
      outsideMeshNamespaces: values["outside-mesh-namespace"],
      capture: values.capture,
      captureDns: values["capture-dns"],
      cniSocket: values["cni-socket"],
      uninstallWhenGone: values["uninstall-when-gone"],
    })
    : edgeRole!.runStandalone({
      ...common,
      stateDir,
      bindAddress: values["bind-address"]!,
      usableAddresses: values["usable-address"],
      nodeId,
      spireSocket: values["spire-socket"],
      trustDomain: values["trust-domain"],
      spiffeIdTemplate: values["spiffe-id-template"],
      outsideMeshNamespaces: values["outside-mesh-namespace"],
    });
  await agent;
  await new Promise(() => {});
  return 0;
}

if (import.meta.main) await runMain("agent", main);
