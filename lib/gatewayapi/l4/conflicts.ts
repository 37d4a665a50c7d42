/**
 * L4 routes competing for one listener socket: a TCP or UDP listener forwards to one route, a TLS
 * listener port to one route per SNI name. The older route keeps the name; a newer one loses
 * those hostnames, and the attachment when none is left (Accepted=False NotAllowedByListeners).
 * @module
 */
import type { Attachment } from "../attachment.ts";
import type { ListenerState } from "../gateways.ts";
import { type AttachedRoute, settleByAge } from "../kind_conflicts.ts";
import { fail } from "../status/mod.ts";
import { keyOf } from "../object_index.ts";

const L4_PROTOCOLS = new Set(["TLS", "TCP", "UDP"]);

/** The SNI name an attachment hostname is matched by: TCP and UDP have none. */
const sniOf = (protocol: string, host: string) =>
  protocol === "TCP" || protocol === "UDP" ? "*" : host;

/**
 * Drops the L4 attachments (or hostnames) an older route already holds, refusing a parent left
 * with none (Accepted=False NotAllowedByListeners): the routes with settled parents, as new
 * values (settleByAge). `listeners` are this resolve's, by id. With `ownProxies` (a proxy per
 * Gateway: the controller's edges) only routes of the same Gateway compete, as only they share a
 * socket.
 */
export function settleL4Conflicts<R extends AttachedRoute>(
  routes: readonly R[],
  listeners: ReadonlyMap<string, ListenerState>,
  ownProxies = false,
): readonly R[] {
  const isL4 = (a: Attachment) => L4_PROTOCOLS.has(listeners.get(a.listenerId)!.listener.protocol);
  const l4 = routes.filter((s) => s.parents.some((p) => p.attachments.some(isL4)));
  if (l4.length < 2) return routes;
  /** `<address>|<port>/<sni>` → the route holding it. */
  const held = new Map<string, AttachedRoute>();
  return settleByAge(routes, (state, parent) => {
    let rival: AttachedRoute | undefined;
    let changed = false;
    const attachments = parent.attachments.flatMap((a) => {
      const l = listeners.get(a.listenerId)!;
      const protocol = l.listener.protocol;
      if (!L4_PROTOCOLS.has(protocol)) return [a];
      const port = l.listener.port;
      const scope = ownProxies ? `${keyOf(l.gateway)}#` : "";
      const keys = (h: string) =>
        l.addresses.map((addr) => `${scope}${addr}|${port}/${sniOf(protocol, h)}`);
      const hostnames = a.hostnames.filter((h) => {
        const owner = keys(h).map((k) => held.get(k)).find((o) => o && o !== state);
        if (owner) rival ??= owner;
        return !owner;
      });
      if (parent.accepted.ok) {
        for (const h of hostnames) for (const k of keys(h)) held.set(k, state);
      }
      if (hostnames.length === a.hostnames.length) return [a];
      changed = true;
      return hostnames.length ? [{ ...a, hostnames }] : [];
    });
    if (!changed) return parent;
    const refused = parent.accepted.ok && parent.attachments.length > 0 &&
      attachments.length === 0 && rival;
    return {
      attachments,
      accepted: refused
        ? fail(
          "NotAllowedByListeners",
          `the listener already forwards to the older ${refused.kind} ${keyOf(refused.route)}`,
        )
        : parent.accepted,
    };
  }, l4);
}
