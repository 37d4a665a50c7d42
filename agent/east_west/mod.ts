/**
 * `agent east-west-gateway`: this cluster's east-west gateway, for clusters with no pod-network
 * routes between them (docs/multicluster.md). Its Envoy passes each incoming mTLS connection, by
 * its clusterset SNI, to a ready pod of the exported Service at `podIP:15008`, unopened.
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../../lib/log/mod.ts";
import { untilSignal } from "../../lib/cli/mod.ts";
import { originProblem } from "../../lib/registry/mod.ts";
import { defaultStateDir } from "../envoy/mod.ts";
import { runEastWestGateway } from "./run.ts";
import { standaloneDefaults } from "../edge/mod.ts";

export { type EastWestGateway, type EastWestGatewayOptions, runEastWestGateway } from "./run.ts";

const usage =
  `usage: agent east-west-gateway --registry-url <url> --region <r> --cluster <c> --listen <host:port> [flags]

  --registry-url <url>     the clusterset registry's etcd (this cluster's records are read)
  --region <name>          this cluster's region (a DNS label)
  --cluster <name>         this cluster's name in the region (a DNS label)
  --listen <host:port>     where other clusters' callers connect (the address the controller
                           publishes with --east-west-gateway, or the one behind it)
  --mesh-domain <domain>   the clusterset's mesh domain (default aether.internal): a Service's
                           clusterset VIP mesh SNI is passed through too
  --admin-address <h:p>    /healthz /readyz /status /metrics (default 127.0.0.1:15000)
  --xds-address <h:p>      xDS server for its Envoy (default 127.0.0.1:0)
  --node-id <id>           Envoy node id (default east-west-gateway)
  --envoy <path|auto|none> envoy to start (default auto)
  --envoy-log-level <lvl>  Envoy log level (default warning)
  --state-dir <dir>        where its Envoy is recorded (default: per node id)`;

/** Runs the gateway until SIGINT/SIGTERM. */
export async function eastWestCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      "registry-url": { type: "string" },
      region: { type: "string" },
      cluster: { type: "string" },
      listen: { type: "string" },
      "mesh-domain": { type: "string", default: standaloneDefaults.meshDomain },
      "admin-address": { type: "string", default: "127.0.0.1:15000" },
      "xds-address": { type: "string", default: "127.0.0.1:0" },
      "node-id": { type: "string", default: "east-west-gateway" },
      envoy: { type: "string", default: "auto" },
      "envoy-log-level": { type: "string", default: "warning" },
      "state-dir": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.error(usage);
    return 0;
  }
  const origin = { region: values.region ?? "", cluster: values.cluster ?? "" };
  const problem = !values["registry-url"]
    ? "--registry-url is required"
    : !values.listen
    ? "--listen is required"
    : originProblem(origin);
  if (problem) {
    console.error(`agent east-west-gateway: ${problem}\n\n${usage}`);
    return 2;
  }
  const logger = new Logger("agent");
  const nodeId = values["node-id"]!;
  const gw = await runEastWestGateway({
    registryUrl: values["registry-url"],
    origin,
    listen: values.listen!,
    meshDomain: values["mesh-domain"],
    adminAddress: values["admin-address"]!,
    xdsAddress: values["xds-address"]!,
    nodeId,
    envoy: values.envoy!,
    envoyLogLevel: values["envoy-log-level"],
    stateDir: values["state-dir"] ?? defaultStateDir(nodeId),
    logger,
  });
  return await untilSignal(logger, "shutting down", () => gw.close());
}
