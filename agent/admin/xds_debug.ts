/** The `/debug/xds` document: every resource the cache serves, decoded, per node. */
import { messageType, typeUrlPrefix } from "../xds/proto.ts";
import type { SnapshotCache } from "../xds/cache/mod.ts";
import type { Snapshot } from "../xds/cache/mod.ts";

function decodeSnapshot(snap: Snapshot): Record<string, unknown> {
  const out: Record<string, unknown> = { version: snap.version };
  for (const typeUrl of snap.typeUrls()) {
    const type = messageType(typeUrl.slice(typeUrlPrefix.length));
    const items = snap.resources(typeUrl);
    const short = typeUrl.split(".").pop()!;
    out[short] = {
      version: items.version,
      resources: [...items.items.values()].map((r) => ({
        name: r.name,
        hash: r.hash,
        // Secrets are listed by name only: never show private keys on an admin page.
        ...(short === "Secret" ? {} : {
          resource: type.toObject(type.decode(r.value), {
            longs: Number,
            enums: String,
            json: true,
          }),
        }),
      })),
    };
  }
  return out;
}

/** Decodes the default snapshot and every node's own snapshot. */
export function xdsDebug(cache: SnapshotCache): unknown {
  const def = cache.getDefaultSnapshot();
  return {
    default: def ? decodeSnapshot(def) : null,
    nodes: Object.fromEntries(
      cache.nodeIds().map((id) => [id, decodeSnapshot(cache.getSnapshot(id)!)]),
    ),
  };
}
