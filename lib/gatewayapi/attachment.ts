/**
 * Route attachment, shared by every route kind: parentRef → Gateway listeners (sectionName, port),
 * listener allowedRoutes (namespaces Same/All/Selector, kinds), hostname intersection, and the
 * Accepted outcome per parentRef. Kind-specific files only convert rules.
 * @module
 */
import { fail, type Outcome, pass } from "./status/mod.ts";
import type { GatewayState, ListenerState } from "./gateways.ts";
import type { RouteKind } from "./routes/kind.ts";
import { routeHostnames } from "./hostnames.ts";
import { selectorMatches } from "./refs.ts";
import { keyOf, type Obj, type ObjectIndex } from "./object_index.ts";
import { GATEWAY_GROUP, type ParentReference, type RouteSpecCommon } from "./types.ts";

/**
 * A route attached to one listener, serving these (intersected) hostnames. The listener is named
 * by its id (`<ns>/<gateway>/<listener name>`), not held: each resolve has listener states of its
 * own, and an outcome naming none of them holds for the next resolve over the same Gateways.
 */
export interface Attachment {
  readonly listenerId: string;
  readonly hostnames: readonly string[];
}

/**
 * The outcome of one parentRef that names one of our Gateways. Outcomes are remembered between
 * resolves (state/attach.ts): never changed, a settled one is a new value (kind_conflicts.ts).
 */
export interface ParentOutcome {
  readonly parentRef: ParentReference;
  readonly accepted: Outcome;
  readonly attachments: readonly Attachment[];
}

/**
 * `parents` with every accepted one refused by `unsupported` (a route using a feature aether
 * does not implement), as new outcomes; `parents` itself when nothing changes.
 */
export function refusedWhenUnsupported<P extends { readonly accepted: Outcome }>(
  parents: readonly P[],
  unsupported: Outcome | undefined,
): readonly P[] {
  if (!unsupported || !parents.some((p) => p.accepted.ok)) return parents;
  return parents.map((p) => (p.accepted.ok ? { ...p, accepted: unsupported } : p));
}

function namespaceAllowed(indexed: ObjectIndex, l: ListenerState, routeNs: string): boolean {
  const ns = l.listener.allowedRoutes?.namespaces;
  const from = ns?.from ?? "Same";
  if (from === "All") return true;
  if (from === "Same") return routeNs === l.gateway.metadata.namespace;
  return selectorMatches(ns?.selector, indexed.namespaces.get(routeNs) ?? {});
}

/** The parentRef as echoed in status: group, kind, namespace, name, sectionName, port. */
export const normalizedRef = (p: ParentReference): ParentReference => ({
  group: p.group ?? GATEWAY_GROUP,
  kind: p.kind ?? "Gateway",
  ...(p.namespace !== undefined ? { namespace: p.namespace } : {}),
  name: p.name,
  ...(p.sectionName !== undefined ? { sectionName: p.sectionName } : {}),
  ...(p.port !== undefined ? { port: p.port } : {}),
});

const describeRef = (p: ParentReference, ns: string) =>
  `${ns}/${p.name}${p.sectionName ? ` sectionName ${p.sectionName}` : ""}${
    p.port ? ` port ${p.port}` : ""
  }`;

/**
 * Attaches a route to our Gateways. parentRefs naming something other than one of our Gateways
 * are skipped (another controller owns their status). Reasons, most specific failure first:
 * NoMatchingParent (no listener has that sectionName/port), NotAllowedByListeners (no such
 * listener allows the route's namespace or kind), NoMatchingListenerHostname.
 */
export function attachRoute(
  indexed: ObjectIndex,
  gateways: Map<string, GatewayState>,
  kind: RouteKind,
  route: Obj<RouteSpecCommon>,
): ParentOutcome[] {
  const out: ParentOutcome[] = [];
  const routeNs = route.metadata.namespace;
  for (const parentRef of route.spec.parentRefs ?? []) {
    if (
      (parentRef.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP ||
      (parentRef.kind ?? "Gateway") !== "Gateway"
    ) continue;
    const ns = parentRef.namespace ?? routeNs;
    const gw = gateways.get(`${ns}/${parentRef.name}`);
    if (!gw) continue;
    const named = gw.listeners.filter((l) =>
      (parentRef.sectionName === undefined || l.listener.name === parentRef.sectionName) &&
      (parentRef.port === undefined || l.listener.port === parentRef.port)
    );
    const allowed = named.filter((l) =>
      l.supportedKinds.some((k) => k.kind === kind) && namespaceAllowed(indexed, l, routeNs)
    );
    const attachments = allowed
      .map((l): Attachment => ({
        listenerId: l.id,
        hostnames: routeHostnames(l.listener.hostname, route.spec.hostnames),
      }))
      .filter((a) => a.hostnames.length > 0);
    let accepted: Outcome;
    if (named.length === 0) {
      accepted = fail(
        "NoMatchingParent",
        `Gateway ${describeRef(parentRef, ns)} has no such listener`,
      );
    } else if (allowed.length === 0) {
      accepted = fail(
        "NotAllowedByListeners",
        `no listener of Gateway ${
          describeRef(parentRef, ns)
        } allows ${kind} from namespace ${routeNs}`,
      );
    } else if (attachments.length === 0) {
      accepted = fail(
        "NoMatchingListenerHostname",
        `no hostname of ${kind} ${keyOf(route)} matches a listener of Gateway ${
          describeRef(parentRef, ns)
        }`,
      );
    } else {
      accepted = pass("Accepted", "route accepted");
    }
    out.push({ parentRef: normalizedRef(parentRef), accepted, attachments });
  }
  return out;
}
