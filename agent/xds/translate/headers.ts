/**
 * Gateway API header modifiers (set / add / remove) as Envoy header-mutation fields.
 * @module
 */
import type { IRHeaderModifier } from "../../../lib/ir/mod.ts";
import { AppendAction } from "./enums.ts";

/** `HeaderValueOption` list for one modifier: `set` overwrites, `add` appends. */
export function headerValueOptions(mod: IRHeaderModifier): Record<string, unknown>[] {
  return [
    ...mod.set.map((h) => ({
      header: { key: h.name, value: h.value },
      append_action: AppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
    })),
    ...mod.add.map((h) => ({
      header: { key: h.name, value: h.value },
      append_action: AppendAction.APPEND_IF_EXISTS_OR_ADD,
    })),
  ];
}

/**
 * Adds the request and response header edits to `target` (a Route, VirtualHost or
 * WeightedCluster.ClusterWeight — they share the field names). Empty lists are left out.
 */
export function applyHeaderModifiers(
  target: Record<string, unknown>,
  request: IRHeaderModifier | undefined,
  response: IRHeaderModifier | undefined,
): void {
  for (const [dir, mod] of [["request", request], ["response", response]] as const) {
    if (!mod) continue;
    const add = headerValueOptions(mod);
    if (add.length) target[`${dir}_headers_to_add`] = add;
    if (mod.remove.length) target[`${dir}_headers_to_remove`] = [...mod.remove];
  }
}
