/**
 * Mesh L4 routes competing for one Service port. A TCP connection carries nothing to choose a
 * route by, so per role (the producer routes, or one caller namespace's consumer routes) a Service
 * port forwards to one TCPRoute (a UDP port to one UDPRoute), the oldest; a TLS connection is chosen by its SNI, so each name
 * belongs to one TLSRoute, the oldest holding it. A newer route loses a port where an older one
 * holds it (a TLSRoute: any of its names there), and its parent is refused when no port is left
 * (Accepted=False NoMatchingParent, naming the older route). A port carries one L4 kind: a
 * TLSRoute on a port a TCPRoute holds (or the reverse) loses it the same way.
 * @module
 */
import { fail } from "../status/mod.ts";
import { keyOf, sortByAge } from "../object_index.ts";
import type { MeshRouteState } from "./build.ts";

/** The names a route claims on a port: `*` for a TCPRoute or UDPRoute (the whole port). */
function claims(state: MeshRouteState): string[] {
  if (state.kind !== "TLSRoute") return ["*"];
  return (state.route.spec as { hostnames?: string[] } | undefined)?.hostnames ?? ["*"];
}

/**
 * The states with their L4 conflicts settled, in the same order; the L4 routes are settled oldest
 * first (Gateway API age order, across kinds). Outcomes that change are new objects; the others
 * are kept.
 */
export function settleMeshL4Conflicts(states: readonly MeshRouteState[]): MeshRouteState[] {
  /** `<ns>/<service>:<port>/<protocol>#<role>` → the kind holding the port and its names' routes. */
  const held = new Map<string, { kind: string; names: Map<string, MeshRouteState> }>();
  const l4 = sortByAge(states.filter((s) => s.converted.l4Backends !== undefined), (s) => s.route);
  if (l4.length < 2) return [...states];
  const settled = new Map(l4.map((state) => [state, settle(state, held)]));
  return states.map((s) => settled.get(s) ?? s);
}

function settle(
  state: MeshRouteState,
  held: Map<string, { kind: string; names: Map<string, MeshRouteState> }>,
): MeshRouteState {
  const names = claims(state);
  let changed = false;
  const parents = state.parents.map((parent) => {
    if (!parent.accepted.ok || !parent.service) return parent;
    const svc = keyOf(parent.service);
    const role = parent.consumer ?? "";
    let rival: MeshRouteState | undefined;
    const ports = parent.ports.filter((p) => {
      const key = `${svc}:${p.port}/${p.protocol ?? "TCP"}#${role}`;
      const slot = held.get(key);
      if (slot) {
        const owner = slot.kind !== state.kind
          ? slot.names.values().next().value
          : names.map((n) => slot.names.get(n)).find((o) => o && o !== state);
        if (owner) {
          rival ??= owner;
          return false;
        }
        for (const n of names) slot.names.set(n, state);
      } else {
        held.set(key, { kind: state.kind, names: new Map(names.map((n) => [n, state])) });
      }
      return true;
    });
    if (ports.length === parent.ports.length) return parent;
    changed = true;
    const older = rival!;
    const callers = role ? `namespace ${role}'s callers` : "its callers";
    return ports.length > 0 ? { ...parent, ports } : {
      ...parent,
      ports,
      accepted: fail(
        "NoMatchingParent",
        `Service ${svc} ${parent.ports.map((p) => `port ${p.port}`).join(", ")} already ` +
          `forwards ${callers}${state.kind === "TLSRoute" ? " (for these names)" : ""} to ` +
          `the older ${older.kind} ${keyOf(older.route)}`,
      ),
    };
  });
  return changed ? { ...state, parents } : state;
}
