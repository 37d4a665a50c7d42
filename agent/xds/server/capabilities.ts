/**
 * Envoy capabilities negotiated through the node metadata. An Envoy outlives the agent that
 * started it (a restarted agent adopts it; the node-proxy DaemonSet's Envoy keeps running while
 * the agent pod is replaced), so a newer agent may serve an Envoy started from an older
 * bootstrap. The bootstrap therefore advertises what it enables in `node.metadata` under
 * {@link CAPABILITIES_KEY}; the agent reads it from the stream's first request and uses a
 * feature that needs bootstrap support only for a node that advertised it. An Envoy whose
 * bootstrap says nothing gets the config an older agent would have pushed, never a NACK.
 * @module
 */
import type { NodeInfo } from "./service.ts";

/** The `node.metadata` key holding the list of capability names. */
export const CAPABILITIES_KEY = "aether.capabilities";

/**
 * The bootstrap enables `envoy.bootstrap.internal_listener`: listeners with `internal_listener`
 * and endpoints with `envoy_internal_address` are accepted (the node proxy's same-node hop).
 */
export const INTERNAL_LISTENER = "internal_listener";

/** What the bootstrap of bootstrap.ts enables (and advertises), in the order it lists them. */
export function bootstrapCapabilities(): string[] {
  return [INTERNAL_LISTENER];
}

interface StructValue {
  stringValue?: string;
  listValue?: { values?: StructValue[] };
}

/**
 * The capabilities a node advertised (sorted, no duplicates): the strings of the list at
 * {@link CAPABILITIES_KEY} in its metadata (a protobuf Struct as decoded). Anything else there,
 * or no metadata, is no capability.
 */
export function nodeCapabilities(node: NodeInfo | null | undefined): string[] {
  const field = node?.metadata?.fields?.[CAPABILITIES_KEY] as StructValue | undefined;
  const values = field?.listValue?.values ?? [];
  const names = values.flatMap((v) => typeof v.stringValue === "string" ? [v.stringValue] : []);
  return [...new Set(names)].sort();
}
