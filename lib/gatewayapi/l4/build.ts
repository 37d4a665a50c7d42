/**
 * L4 filter chains of one bound port: TCP → one `tcpProxy` chain; UDP → one `udpProxy` chain;
 * TLS → per route on each Gateway listener a chain matched by SNI (its hostnames ∩ the listener
 * hostname): `tlsPassthrough` on a Passthrough listener, `tcpProxy` with the listener's
 * certificates on a Terminate listener. l4/conflicts.ts has left one route per name.
 * @module
 */
import type { Placement } from "../placement.ts";
import type { ListenerState } from "../gateways.ts";
import { compareHostnames } from "../hostnames.ts";
import { keyOf } from "../object_index.ts";
import type { IRBackend, IRFilterChain } from "../../ir/mod.ts";

const backendsOf = (p: Placement): IRBackend[] => p.converted.l4Backends ?? [];

/** The routes placed on `l`, oldest first (placements are made in age order per kind). */
const placedOn = (l: ListenerState, placements: Placement[]) =>
  placements.filter((p) => p.listener === l);

/** SNI names of a placement: `*` (any name) is an empty list. */
const serverNames = (p: Placement) =>
  [...p.hostnames].sort(compareHostnames).filter((h) => h !== "*");

/** The L4 filter chains of the listeners bound on one port (all of one L4 protocol). */
export function l4FilterChains(
  protocol: "TLS" | "TCP" | "UDP",
  listeners: ListenerState[],
  placements: Placement[],
): IRFilterChain[] {
  if (protocol !== "TLS") {
    const l = listeners[0];
    const p = placedOn(l, placements)[0];
    if (!p) return [];
    return protocol === "TCP"
      ? [{
        kind: "tcpProxy",
        name: l.id,
        serverNames: [],
        certificateSecrets: [],
        backends: backendsOf(p),
      }]
      : [{ kind: "udpProxy", name: l.id, backends: backendsOf(p) }];
  }
  const chains: IRFilterChain[] = [];
  for (const l of listeners) {
    const terminate = (l.listener.tls?.mode ?? "Terminate") === "Terminate";
    for (const p of placedOn(l, placements)) {
      const name = `${l.id}/${keyOf(p.route)}`;
      chains.push(
        terminate
          ? {
            kind: "tcpProxy",
            name,
            serverNames: serverNames(p),
            certificateSecrets: [...l.certificateSecrets],
            backends: backendsOf(p),
          }
          : { kind: "tlsPassthrough", name, serverNames: serverNames(p), backends: backendsOf(p) },
      );
    }
  }
  return chains.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
