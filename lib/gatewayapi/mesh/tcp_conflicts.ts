/**
 * Mesh TCPRoutes competing for one Service port: a connection carries no match to choose a route
 * by, so each Service port forwards a caller to one TCPRoute — per role (the producer routes, or
 * one caller namespace's consumer routes) the oldest. A newer TCPRoute loses that port, and its
 * parent is refused when no port is left (Accepted=False NoMatchingParent, naming the older one).
 * @module
 */
import { fail } from "../status/mod.ts";
import { keyOf } from "../object_index.ts";
import type { MeshRouteState } from "./build.ts";

/**
 * The states with their TCPRoute conflicts settled, in the same order. `states` are in age order
 * within a kind (resolve's order). Outcomes that change are new objects; the others are kept.
 */
export function settleMeshTcpConflicts(states: readonly MeshRouteState[]): MeshRouteState[] {
  /** `<ns>/<service>:<port>#<role>` → the TCPRoute holding it. */
  const held = new Map<string, MeshRouteState>();
  return states.map((state) => {
    if (state.converted.l4Backends === undefined) return state;
    let changed = false;
    const parents = state.parents.map((parent) => {
      if (!parent.accepted.ok || !parent.service) return parent;
      const svc = keyOf(parent.service);
      const role = parent.consumer ?? "";
      let rival: MeshRouteState | undefined;
      const ports = parent.ports.filter((p) => {
        const key = `${svc}:${p.port}#${role}`;
        const owner = held.get(key);
        if (owner && owner !== state) {
          rival ??= owner;
          return false;
        }
        held.set(key, state);
        return true;
      });
      if (ports.length === parent.ports.length) return parent;
      changed = true;
      const older = rival!;
      return ports.length > 0 ? { ...parent, ports } : {
        ...parent,
        ports,
        accepted: fail(
          "NoMatchingParent",
          `Service ${svc} ${parent.ports.map((p) => `port ${p.port}`).join(", ")} already ` +
            `forwards ${role ? `namespace ${role}'s callers` : "its callers"} to the older ` +
            `${older.kind} ${keyOf(older.route)}`,
        ),
      };
    });
    return changed ? { ...state, parents } : state;
  });
}
