/**
 * Cross-namespace reference checks (ReferenceGrant) and label selectors.
 * @module
 */
import type { ObjectIndex } from "./object_index.ts";
import type { LabelSelector } from "./types.ts";

/** One end of a reference: the object's group, kind and namespace (and name for the target). */
export interface RefEnd {
  group: string;
  kind: string;
  namespace: string;
  name?: string;
}

/**
 * Whether a reference from `from` to `to` is allowed: always within a namespace; across
 * namespaces only when a ReferenceGrant in the target namespace lists both ends.
 */
export function referenceAllowed(indexed: ObjectIndex, from: RefEnd, to: RefEnd): boolean {
  if (from.namespace === to.namespace) return true;
  return indexed.grants.some((g) =>
    g.metadata.namespace === to.namespace &&
    g.spec.from.some((f) =>
      f.group === from.group && f.kind === from.kind && f.namespace === from.namespace
    ) &&
    g.spec.to.some((t) =>
      t.group === to.group && t.kind === to.kind && (!t.name || t.name === to.name)
    )
  );
}

/** Whether `labels` satisfy a label selector (all of matchLabels and matchExpressions). */
export function selectorMatches(
  selector: LabelSelector | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[k] !== v) return false;
  }
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    const ok = e.operator === "In"
      ? inValues
      : e.operator === "NotIn"
      ? !inValues
      : e.operator === "Exists"
      ? has
      : !has;
    if (!ok) return false;
  }
  return true;
}
