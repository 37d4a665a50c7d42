/**
 * `cni/main.ts install` and `cni/main.ts uninstall`: the node agent DaemonSet's installer
 * (cni/install.ts) on the command line.
 *
 *   install   [--cni-bin-dir <dir>] [--cni-conf-dir <dir>] [--plugin <binary>]
 *             [--socket <path>] [--timeout-seconds <s>] [--exclude-namespace <ns>]…
 *             [--once] [--uninstall-on-exit | --uninstall-when-gone <ns>/<daemonset>]
 *             [--resync-seconds <s>]
 *   uninstall [--cni-bin-dir <dir>] [--cni-conf-dir <dir>]
 *
 * `install` installs, then keeps watching until SIGTERM or SIGINT (`--once`: one pass). Excluded
 * namespaces default to kube-system and `$POD_NAMESPACE` (aether's own, from the downward API).
 * `--uninstall-on-exit` is the uninstall switch: without it (an upgrade, a restart) the plugin
 * stays, and new pods wait for the next agent. `--uninstall-when-gone` (the chart's) decides on
 * the way out: entry and binary go when that DaemonSet is gone or being deleted, asked of the API
 * server with the pod's service account (cni/uninstall_check.ts); with no answer they stay.
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import {
  DEFAULT_EXCLUDED_NAMESPACES,
  DEFAULT_SOCKET_PATH,
  DEFAULT_TIMEOUT_SECONDS,
} from "./conf.ts";
import { installOnce, uninstall, watchInstall } from "./install.ts";
import {
  type DaemonSetRef,
  inClusterGet,
  parseDaemonSetRef,
  releaseUninstalling,
  UNINSTALL_RETRY_MS,
} from "./uninstall_check.ts";

const usage =
  `usage: cni/main.ts install [--cni-bin-dir <dir>] [--cni-conf-dir <dir>] [--plugin <binary>]
         [--socket <path>] [--timeout-seconds <s>] [--exclude-namespace <ns>]...
         [--once] [--uninstall-on-exit | --uninstall-when-gone <ns>/<daemonset>]
         [--resync-seconds <s>]
       cni/main.ts uninstall [--cni-bin-dir <dir>] [--cni-conf-dir <dir>]

  --cni-bin-dir <dir>        the node's CNI bin dir as mounted (default /host/opt/cni/bin)
  --cni-conf-dir <dir>       the node's CNI conf dir as mounted (default /host/etc/cni/net.d)
  --plugin <binary>          the plugin binary to copy (default /usr/local/bin/aether-cni)
  --socket <path>            the node agent's socket, a host path (default ${DEFAULT_SOCKET_PATH})
  --timeout-seconds <s>      how long an ADD waits for capture (default ${DEFAULT_TIMEOUT_SECONDS})
  --exclude-namespace <ns>   never capture this namespace's pods (repeatable; default
                             ${DEFAULT_EXCLUDED_NAMESPACES.join(", ")} and $POD_NAMESPACE)
  --once                     one pass, then exit
  --uninstall-on-exit        remove entry and binary on SIGTERM (uninstall; not for upgrades)
  --uninstall-when-gone <ns>/<daemonset>
                             on SIGTERM, remove them only when that DaemonSet is gone or being
                             deleted (asked of the API server with the pod's service account;
                             kept when it cannot be asked)
  --resync-seconds <s>       a pass this often besides file events (default 30)`;

/** Runs `install`/`uninstall` with `args` (its name first); returns the exit code. */
export async function installCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args: args.slice(1),
    options: {
      "cni-bin-dir": { type: "string", default: "/host/opt/cni/bin" },
      "cni-conf-dir": { type: "string", default: "/host/etc/cni/net.d" },
      plugin: { type: "string", default: "/usr/local/bin/aether-cni" },
      socket: { type: "string", default: DEFAULT_SOCKET_PATH },
      "timeout-seconds": { type: "string", default: String(DEFAULT_TIMEOUT_SECONDS) },
      "exclude-namespace": { type: "string", multiple: true },
      once: { type: "boolean" },
      "uninstall-on-exit": { type: "boolean" },
      "uninstall-when-gone": { type: "string" },
      "resync-seconds": { type: "string", default: "30" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.error(usage);
    return 0;
  }
  const logger = new Logger("cni-install");
  const dirs = { binDir: values["cni-bin-dir"]!, confDir: values["cni-conf-dir"]! };
  if (args[0] === "uninstall") {
    logger.info("cni uninstalled", { confs: await uninstall(dirs) });
    return 0;
  }
  let gone: DaemonSetRef | undefined;
  try {
    gone = values["uninstall-when-gone"] === undefined
      ? undefined
      : parseDaemonSetRef(values["uninstall-when-gone"]);
  } catch (e) {
    console.error(`cni install: --uninstall-when-gone: ${(e as Error).message}\n\n${usage}`);
    return 2;
  }
  if (gone && values["uninstall-on-exit"]) {
    console.error(
      `cni install: --uninstall-on-exit or --uninstall-when-gone, not both\n\n${usage}`,
    );
    return 2;
  }
  const timeoutSeconds = Number(values["timeout-seconds"]);
  const resync = Number(values["resync-seconds"]);
  if (!(timeoutSeconds > 0 && timeoutSeconds <= 100) || !(resync > 0)) {
    console.error(
      `cni install: --timeout-seconds must be in (0, 100], --resync-seconds > 0\n\n${usage}`,
    );
    return 2;
  }
  const own = Deno.env.get("POD_NAMESPACE");
  const excludeNamespaces = values["exclude-namespace"] ??
    [...DEFAULT_EXCLUDED_NAMESPACES, ...(own ? [own] : [])];
  const o = {
    ...dirs,
    plugin: values.plugin!,
    keys: { socketPath: values.socket!, timeoutSeconds, excludeNamespaces },
    logger,
  };
  if (values.once) {
    logger.info("cni install", { ...(await installOnce(o)) });
    return 0;
  }
  const stop = new AbortController();
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(sig, () => stop.abort());
  }
  await watchInstall({
    ...o,
    signal: stop.signal,
    resyncMs: resync * 1000,
    uninstallOnExit: gone ? () => uninstalling(gone, logger) : values["uninstall-on-exit"] === true,
  });
  return 0;
}

/** Whether `ds` is gone or going, logged; `KUBERNETES_SERVICE_*` and the pod's token. */
async function uninstalling(ds: DaemonSetRef, logger: Logger): Promise<boolean> {
  const v = await releaseUninstalling(ds, inClusterGet(), { retryForMs: UNINSTALL_RETRY_MS });
  if (!v.known) {
    logger.warn("cannot tell whether aether is being uninstalled: leaving the plugin installed", {
      reason: v.reason,
    });
  } else {logger.info(v.uninstalling ? "aether is being uninstalled" : "not an uninstall", {
      reason: v.reason,
    });}
  return v.uninstalling;
}
