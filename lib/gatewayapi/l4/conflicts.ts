/**
 * L4 routes competing for one listener socket: a TCP or UDP listener forwards to one route, a TLS
 * listener port to one route per SNI name. The older route keeps the name; a newer one loses
 * those hostnames, and the attachment when none is left (Accepted=False NotAllowedByListeners).
 * @module
 */
import type { AttachedRoute } from "../kind_conflicts.ts";
import { fail } from "../status/mod.ts";
import { keyOf, sortByAge } from "../object_index.ts";

const L4_PROTOCOLS = new Set(["TLS", "TCP", "UDP"]);

/** The SNI name an attachment hostname is matched by: TCP and UDP have none. */
const sniOf = (protocol: string, host: string) =>
  protocol === "TCP" || protocol === "UDP" ? "*" : host;

/**
 * Drops the L4 attachments (or hostnames) an older route already holds, updating `accepted`. With
 * `ownProxies` (a proxy per Gateway: the controller's edges) only routes of the same Gateway
 * compete, as only they share a socket.
 */
export function settleL4Conflicts(routes: AttachedRoute[], ownProxies = false) {
  const l4 = routes.filter((s) =>
    s.parents.some((p) => p.attachments.some((a) => L4_PROTOCOLS.has(a.listener.listener.protocol)))
  );
  if (l4.length < 2) return;
  /** `<address>|<port>/<sni>` → the route holding it. */
  const held = new Map<string, AttachedRoute>();
  for (const state of sortByAge(l4, (s) => s.route)) {
    for (const parent of state.parents) {
      const before = parent.attachments.length;
      let rival: AttachedRoute | undefined;
      parent.attachments = parent.attachments.flatMap((a) => {
        const protocol = a.listener.listener.protocol;
        if (!L4_PROTOCOLS.has(protocol)) return [a];
        const port = a.listener.listener.port;
        const scope = ownProxies ? `${keyOf(a.listener.gateway)}#` : "";
        const keys = (h: string) =>
          a.listener.addresses.map((addr) => `${scope}${addr}|${port}/${sniOf(protocol, h)}`);
        const hostnames = a.hostnames.filter((h) => {
          const owner = keys(h).map((k) => held.get(k)).find((o) => o && o !== state);
          if (owner) rival ??= owner;
          return !owner;
        });
        if (parent.accepted.ok) {
          for (const h of hostnames) for (const k of keys(h)) held.set(k, state);
        }
        return hostnames.length ? [{ ...a, hostnames }] : [];
      });
      if (parent.accepted.ok && before > 0 && parent.attachments.length === 0 && rival) {
        parent.accepted = fail(
          "NotAllowedByListeners",
          `the listener already forwards to the older ${rival.kind} ${keyOf(rival.route)}`,
        );
      }
    }
  }
}
