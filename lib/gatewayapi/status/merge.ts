/**
 * Status merge: computed status (from resolve) laid over the status an object already carries, so
 * a condition's `lastTransitionTime` moves only when its `status` changes. The same rule as
 * metav1 `SetStatusCondition` and Envoy Gateway's MergeConditions, applied to every condition list
 * of a Gateway API status: `conditions`, `listeners[].conditions` (matched by listener name) and
 * `parents[].conditions` (matched by parentRef and controllerName). Pure: the time is an argument.
 * @module
 */
import type { Condition } from "../types.ts";

/**
 * Merges `next` conditions over `previous` ones: each condition of `next` keeps the
 * lastTransitionTime of the previous condition of its type when that one had the same status;
 * otherwise it gets `now`. Conditions only in `previous` are dropped (`next` is the truth).
 * Returns `next` itself (the same array) when every condition kept its given time.
 */
export function mergeConditions(
  previous: readonly Condition[] | undefined,
  next: readonly Condition[],
  now: string,
): Condition[] {
  const before = new Map((previous ?? []).map((c) => [c.type, c]));
  let out: Condition[] | undefined;
  for (let i = 0; i < next.length; i++) {
    const c = next[i];
    const old = before.get(c.type);
    const time = old && old.status === c.status && old.lastTransitionTime
      ? old.lastTransitionTime
      : now;
    if (time !== c.lastTransitionTime) {
      out ??= next.slice(0, i);
      out.push({ ...c, lastTransitionTime: time });
    } else if (out) out.push(c);
  }
  return out ?? (next as Condition[]);
}

/** A parentRef identity: group, kind, namespace, name, sectionName, port (absent = empty). */
export function parentKey(ref: Record<string, unknown> | undefined): string {
  const r = ref ?? {};
  return [r.group ?? "gateway.networking.k8s.io", r.kind ?? "Gateway", r.namespace, r.name]
    .concat([r.sectionName, r.port])
    .map((v) => (v === undefined ? "" : String(v)))
    .join("/");
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter(isRec) : []);
const conds = (v: unknown): Condition[] => (Array.isArray(v) ? v as Condition[] : []);

/** Merges the `conditions` of one status-like record; returns `next` when nothing changed. */
function withConditions(prev: Rec | undefined, next: Rec, now: string): Rec {
  if (!Array.isArray(next.conditions)) return next;
  const merged = mergeConditions(conds(prev?.conditions), next.conditions as Condition[], now);
  return merged === next.conditions ? next : { ...next, conditions: merged };
}

/** Merges a list of records matched by `key`; returns `next` when nothing changed. */
function mergeList(prev: unknown, next: Rec[], key: (r: Rec) => string, now: string): Rec[] {
  const before = new Map(list(prev).map((r) => [key(r), r]));
  let changed = false;
  const out = next.map((r) => {
    const m = withConditions(before.get(key(r)), r, now);
    if (m !== r) changed = true;
    return m;
  });
  return changed ? out : next;
}

const routeParentKey = (p: Rec) =>
  `${p.controllerName ?? ""}|${parentKey(p.parentRef as Rec | undefined)}`;

/**
 * Merges a computed status over the previous one (GatewayClass, Gateway, any route kind, or any
 * status with top-level `conditions`): every condition list keeps its transition times where the
 * condition status did not change. `now` stamps the conditions that are new or changed status.
 */
export function mergeStatus(previous: unknown, next: unknown, now: string): unknown {
  if (!isRec(next)) return next;
  const prev = isRec(previous) ? previous : undefined;
  let out = withConditions(prev, next, now);
  if (Array.isArray(next.listeners)) {
    const listeners = mergeList(
      prev?.listeners,
      next.listeners as Rec[],
      (l) => String(l.name),
      now,
    );
    if (listeners !== next.listeners) out = { ...out, listeners };
  }
  if (Array.isArray(next.parents)) {
    const parents = mergeList(prev?.parents, next.parents as Rec[], routeParentKey, now);
    if (parents !== next.parents) out = { ...out, parents };
  }
  return out;
}

/**
 * A route status whose `parents[]` holds our entries (`ours`, computed) and every entry of the
 * previous status written by another controller (kept as they are, in their order, after ours).
 * `isOurs` says whether a controllerName belongs to this controller.
 */
export function withOtherParents(
  previous: unknown,
  ours: unknown,
  isOurs: (controllerName: string) => boolean,
): unknown {
  if (!isRec(ours)) return ours;
  const others = list(isRec(previous) ? previous.parents : undefined)
    .filter((p) => !isOurs(String(p.controllerName ?? "")));
  if (others.length === 0) return ours;
  return { ...ours, parents: [...list(ours.parents), ...others] };
}
