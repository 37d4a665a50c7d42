/**
 * aether's CNI plugin, as the node agent uses it: the handling of a forwarded invocation
 * (handler.ts), the wire to the plugin binary (protocol.ts), the CNI facts (spec.ts) and the
 * plugin's configuration keys (conf.ts); the plugin as cni/main.ts runs it (forward.ts) and the
 * installer (install.ts, conflist.ts) and its check whether aether is being uninstalled
 * (uninstall_check.ts). The binaries themselves are cni/main.ts (`deno compile`)
 * and the static forwarder cni/forwarder.c.
 * @module
 */
export { type Attachments, handleCni, type PodAttachment, resultIps } from "./handler.ts";
export {
  encodeReply,
  encodeRequest,
  type ForwardedRequest,
  FrameError,
  LIMITS,
  readReply,
  readRequest,
} from "./protocol.ts";
export { cniError, CODES, PLUGIN_TYPE, type Reply, SUPPORTED_VERSIONS } from "./spec.ts";
export {
  CAPTURE_ANNOTATION,
  cniVersionOf,
  DEFAULT_EXCLUDED_NAMESPACES,
  DEFAULT_SOCKET_PATH,
  DEFAULT_TIMEOUT_SECONDS,
  parseConf,
  POD_ANNOTATIONS_CAPABILITY,
} from "./conf.ts";
export { runPlugin } from "./forward.ts";
export { installOnce, uninstall, watchInstall } from "./install.ts";
export {
  type DaemonSetRef,
  inClusterGet,
  type KubeGet,
  parseDaemonSetRef,
  releaseUninstalling,
  UNINSTALL_RETRY_MS,
  type UninstallVerdict,
} from "./uninstall_check.ts";
export { pluginEntry, withoutEntry } from "./conflist.ts";
