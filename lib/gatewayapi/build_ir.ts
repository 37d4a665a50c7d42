/**
 * Places converted route rules onto programmed listeners: one IRListener per port, one merged
 * filter chain for HTTP, one chain per Gateway listener for HTTPS (SNI), and virtual hosts per
 * hostname. A hostname belongs to the most specific listener that covers it (listener isolation);
 * within it, rules of every route whose hostname covers the vhost's are ordered by precedence.
 * TLS, TCP and UDP ports get L4 chains (l4/build.ts).
 * @module
 */
import type { ListenerState } from "./gateways.ts";
import { type HostEntry, HostnameIndex } from "./host_index.ts";
import { compareHostnames, covers } from "./hostnames.ts";
import { pushEntries, type RankedEntry, renderRoutes } from "./routes/render.ts";
import type { ListenerContext } from "./routes/kind.ts";
import type { Placement } from "./placement.ts";
import type { VhostInput, VhostMemo, VhostSite } from "./state/mod.ts";
import { l4FilterChains } from "./l4/build.ts";
import type { IRFilterChain, IRHttpFilterChain, IRListener, IRVirtualHost } from "../ir/mod.ts";

/** A listener's hostname, `*` when it has none. */
export const listenerHost = (l: ListenerState) => l.listener.hostname || "*";

/** Renders one virtual host of `domain` from its inputs (routes with their most specific host). */
export function renderVhost(
  domain: string,
  context: ListenerContext,
  inputs: readonly VhostInput[],
): IRVirtualHost {
  const entries: RankedEntry[] = [];
  for (const [route, converted, host] of inputs) pushEntries(entries, route, converted, host);
  return { name: domain, domains: [domain], routes: renderRoutes(entries, context) };
}

/**
 * Each placement of the `owner` listener among the entries covering a domain, with its most
 * specific hostname (one entry, the common case, without a Map).
 */
function ownerInputs(covering: HostEntry<Placement>[], owner: ListenerState): VhostInput[] {
  if (covering.length === 1) {
    const { host, item: p } = covering[0];
    return p.listener === owner ? [[p.route, p.converted, host]] : [];
  }
  const best = new Map<Placement, string>();
  for (const { host, item: p } of covering) {
    if (p.listener !== owner) continue;
    const seen = best.get(p);
    if (seen === undefined || compareHostnames(host, seen) < 0) best.set(p, host);
  }
  return [...best].map(([p, host]): VhostInput => [p.route, p.converted, host]);
}

function virtualHosts(
  listeners: ListenerState[],
  placements: Placement[],
  memo: VhostMemo,
  sites?: VhostSite[],
): IRVirtualHost[] {
  const ids = new Set(listeners.map((l) => l.id));
  const mine = placements.filter((p) => ids.has(p.listener.id));
  const domains = new Set<string>();
  for (const l of listeners) if (l.listener.hostname) domains.add(l.listener.hostname);
  const hosts = new HostnameIndex<Placement>();
  for (const p of mine) {
    for (const h of p.hostnames) {
      domains.add(h);
      hosts.add(h, p);
    }
  }
  const bySpecificity = [...listeners].sort((a, b) =>
    compareHostnames(listenerHost(a), listenerHost(b))
  );
  // One context per listener, shared by its virtual hosts (read-only).
  const contexts = new Map<ListenerState, ListenerContext>(listeners.map((l) => [l, {
    port: l.listener.port,
    protocol: l.listener.protocol as "HTTP" | "HTTPS",
  }]));
  return [...domains].sort(compareHostnames).map((domain) => {
    const owner = bySpecificity.find((l) => covers(listenerHost(l), domain))!;
    const context = contexts.get(owner)!;
    const inputs = ownerInputs(hosts.covering(domain), owner);
    const vhost = memo.render(owner.id, domain, context, inputs, renderVhost);
    sites?.push({ listenerId: owner.id, domain, context, inputs, vhost });
    return vhost;
  });
}

/**
 * Builds the IR listeners for the programmed listeners of our Gateways: one per bound
 * address:port (a Gateway's spec.addresses, else the default address), sorted by address, port.
 * With `sites`, each virtual host rendered is recorded there, in the order the listeners, their
 * filter chains and their virtual hosts come in the result.
 */
export function buildListeners(
  listeners: ListenerState[],
  placements: Placement[],
  defaultAddress: string,
  memo: VhostMemo,
  sites?: VhostSite[],
): IRListener[] {
  const bound = new Map<string, { address: string; port: number; here: ListenerState[] }>();
  for (const l of listeners.filter((l) => l.programmed)) {
    for (const address of l.addresses) {
      const key = `${address}|${l.listener.port}`;
      const entry = bound.get(key) ?? { address, port: l.listener.port, here: [] };
      bound.set(key, entry);
      entry.here.push(l);
    }
  }
  const order = [...bound.values()].sort((a, b) =>
    a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port
  );
  return order.flatMap(({ address, port, here }): IRListener[] => {
    const protocol = here[0].listener.protocol as IRListener["protocol"];
    const name = `${address}:${port}`;
    // Route configuration names carry the address only off the default one (names stay stable).
    const at = address === defaultAddress ? `${port}` : `${address}:${port}`;
    let filterChains: IRFilterChain[];
    if (protocol === "TLS" || protocol === "TCP" || protocol === "UDP") {
      // An L4 port without a route has nothing to forward to: no socket, connections refused.
      filterChains = l4FilterChains(protocol, here, placements);
      if (filterChains.length === 0) return [];
    } else if (protocol === "HTTP") {
      filterChains = [{
        kind: "http",
        name,
        serverNames: [],
        certificateSecrets: [],
        routeConfigName: `http.${at}`,
        virtualHosts: virtualHosts(here, placements, memo, sites),
      }];
    } else {
      filterChains = [...here]
        .sort((a, b) =>
          compareHostnames(listenerHost(a), listenerHost(b)) || (a.id < b.id ? -1 : 1)
        )
        .map((l): IRHttpFilterChain => ({
          kind: "http",
          name: l.id,
          serverNames: l.listener.hostname ? [l.listener.hostname] : [],
          certificateSecrets: [...l.certificateSecrets],
          routeConfigName: `https.${at}/${l.id}`,
          virtualHosts: virtualHosts([l], placements, memo, sites),
        }));
    }
    return [{ name, address, port, protocol, filterChains }];
  });
}
