/**
 * `agent bootstrap --node-name <n> [--xds-address h:p] [--envoy-admin-address h:p]
 * [--max-downstream-connections n] [--envoy-eager-stats] [--envoy-all-stats]
 * [--envoy-eager-clusters]`: prints the Envoy bootstrap (JSON) that points an Envoy the agent
 * does not start itself at the node agent's xDS server — the chart's node-proxy DaemonSet runs its
 * Envoy from it, in its own pod, so the node agent's pod can be replaced while Envoy keeps
 * serving (docs/kubernetes.md). The same {@link envoyBootstrap} as the agent's own Envoy.
 * @module
 */
import { parseArgs } from "node:util";
import { splitHostPort } from "../admin/mod.ts";
import { defaultMaxDownstreamConnections } from "../limits_flags.ts";
import { envoyBootstrap } from "../xds/server/mod.ts";

const usage = `usage: agent bootstrap --node-name <name>
       [--xds-address <h:p>] [--envoy-admin-address <h:p>] [--max-downstream-connections <n>]
       [--envoy-eager-stats]   (every cluster's stats up front; default: on first use)
       [--envoy-all-stats]     (every stat; default: the per-cluster stats nothing reads are not made)
       [--envoy-eager-clusters]  (every cluster on every worker up front; default: on first use)`;

/** The bootstrap for `args`, or an error message. Pure. */
export function bootstrapFor(args: string[]): Record<string, unknown> | string {
  const { values } = parseArgs({
    args,
    options: {
      "node-name": { type: "string" },
      "xds-address": { type: "string", default: "127.0.0.1:18000" },
      "envoy-admin-address": { type: "string", default: "127.0.0.1:15001" },
      "max-downstream-connections": {
        type: "string",
        default: String(defaultMaxDownstreamConnections),
      },
      "envoy-eager-stats": { type: "boolean" },
      "envoy-all-stats": { type: "boolean" },
      "envoy-eager-clusters": { type: "boolean" },
    },
  });
  const nodeId = values["node-name"];
  if (!nodeId) return `--node-name is required\n${usage}`;
  const max = Number(values["max-downstream-connections"]);
  if (!Number.isSafeInteger(max) || max < 0) {
    return `--max-downstream-connections: a whole number\n${usage}`;
  }
  const xds = splitHostPort(values["xds-address"]!);
  const admin = splitHostPort(values["envoy-admin-address"]!);
  return envoyBootstrap({
    nodeId,
    cluster: "aether-node",
    xdsAddress: xds.hostname,
    xdsPort: xds.port,
    adminAddress: admin.hostname,
    adminPort: admin.port,
    delta: true,
    maxDownstreamConnections: max,
    eagerStats: values["envoy-eager-stats"] === true,
    allStats: values["envoy-all-stats"] === true,
    eagerClusters: values["envoy-eager-clusters"] === true,
  });
}

/** Runs `agent bootstrap`; returns the exit code. */
export function bootstrapCommand(args: string[]): number {
  let out: Record<string, unknown> | string;
  try {
    out = bootstrapFor(args);
  } catch (e) {
    out = `${(e as Error).message}\n${usage}`;
  }
  if (typeof out === "string") {
    console.error(`agent bootstrap: ${out}`);
    return 2;
  }
  console.log(JSON.stringify(out, null, 2));
  return 0;
}
