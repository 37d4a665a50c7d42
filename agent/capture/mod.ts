/**
 * Transparent capture on a node: each pod netns gets the `inet aether` table of lib/nft (TCP to
 * a mesh VIP:port → the node proxy's capture listener, optionally cluster DNS → the agent),
 * programmed in process through libnftables (FFI), kept in step with the MeshIR by an engine
 * sink, read back and repaired on drift.
 *
 * ```ts
 * const capture = new CaptureSink({ nodeName, applier: new NftApplier(), logger, metrics });
 * const engine = new Engine({ logger, metrics, resolve, sinks: [xds, capture] });
 * await capture.whenCaptured("/var/run/netns/cni-1234", AbortSignal.timeout(30_000));
 * ```
 * @module
 */
export { type ApplyOutcome, type CaptureApplier, NftApplier } from "./applier.ts";
export { CaptureError, type NftResult } from "./ffi.ts";
export { DEFAULT_CAPTURE_PORT, meshCaptureSpec, type MeshSpecOptions } from "./mesh_spec.ts";
export { CaptureSink, type CaptureSinkOptions, type Every, type PodCapture } from "./sink.ts";
export { type CapturedWait, type CniCapture, cniCapture, CniServer } from "./cni_server.ts";
export { CniSource } from "./cni_source.ts";
export { ADOPTED_PREFIX, PodAdopter } from "./adopt.ts";
