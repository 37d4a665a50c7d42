/**
 * What a node's Envoy asked for on demand, by caller: CDS names (`<cluster>`, or with identity the
 * per-caller `<cluster>|<ns>/<sa>`) and VHDS aliases (`outbound.<caller>/<host>`, Envoy's
 * on-demand VHDS; the caller part only for a per-caller table). Pure.
 * @module
 */
import { TypeUrl } from "../xds/proto.ts";
import { outboundRouteName } from "../xds/translate/node/mod.ts";
import { vhdsNamespace } from "../xds/server/mod.ts";

/** The prefix of the outbound route tables (`outbound.<caller>`), VHDS names' first part. */
const OUTBOUND = outboundRouteName("");

/**
 * The names asked for under `typeUrl`, grouped by the caller (`<ns>/<sa>`, or undefined for the
 * node's shared tables): IR cluster names and lowercased hosts. Other types give nothing.
 */
export function onDemandRequests(
  typeUrl: string,
  names: readonly string[],
): Map<string | undefined, string[]> {
  const byCaller = new Map<string | undefined, string[]>();
  const add = (caller: string | undefined, name: string) => {
    const list = byCaller.get(caller);
    if (list) list.push(name);
    else byCaller.set(caller, [name]);
  };
  // Per-caller clusters (`<cluster>|<ns>/<sa>`, with identity) name the IR cluster first.
  if (typeUrl === TypeUrl.cluster) {
    for (const n of names) {
      const bar = n.indexOf("|");
      add(bar < 0 ? undefined : n.slice(bar + 1), bar < 0 ? n : n.slice(0, bar));
    }
  }
  // VHDS aliases `outbound.<caller>/<host>`.
  if (typeUrl === TypeUrl.virtualHost) {
    for (const n of names.filter((n) => n.includes("/"))) {
      const table = vhdsNamespace(n);
      const caller = table.startsWith(OUTBOUND) ? table.slice(OUTBOUND.length) : undefined;
      add(caller?.includes("/") ? caller : undefined, n.slice(table.length + 1).toLowerCase());
    }
  }
  return byCaller;
}
