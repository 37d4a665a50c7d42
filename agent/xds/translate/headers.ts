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
  if (request) {
    applyModifier(target, "request_headers_to_add", "request_headers_to_remove", request);
  }
  if (response) {
    applyModifier(target, "response_headers_to_add", "response_headers_to_remove", response);
  }
}

function applyModifier(
  target: Record<string, unknown>,
  addField: string,
  removeField: string,
  mod: IRHeaderModifier,
): void {
  const add = headerValueOptions(mod);
  if (add.length) target[addField] = add;
  if (mod.remove.length) target[removeField] = [...mod.remove];
}
