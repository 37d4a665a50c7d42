/**
 * What a backend port gives the cluster made of it: the ready endpoints of a Service port from
 * its EndpointSlices, and why a port cannot carry a route's traffic (its protocol). Pure.
 * @module
 */
import type { EndpointSliceBody, ServicePort } from "./core_types.ts";
import type { KubeObject } from "./types.ts";
import type { IREndpoint } from "../ir/mod.ts";

/** appProtocols whose upstream speaks HTTP/2. */
export const HTTP2_APP_PROTOCOLS: ReadonlySet<string> = new Set(["kubernetes.io/h2c", "grpc"]);
const SUPPORTED_APP_PROTOCOLS: ReadonlySet<string> = new Set([
  "",
  "http",
  "HTTP",
  ...HTTP2_APP_PROTOCOLS,
]);

const byAddress = (a: IREndpoint, b: IREndpoint) =>
  a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port;

/**
 * The ready endpoints of `port` in `slices`, by address then port; an address and port listed
 * more than once is one endpoint, as its last listing has it.
 */
export function readyEndpoints(
  slices: readonly (KubeObject & EndpointSliceBody)[],
  port: ServicePort,
): IREndpoint[] {
  const all: IREndpoint[] = [];
  const name = port.name ?? "";
  for (const slice of slices) {
    if (slice.addressType === "FQDN") continue;
    const slicePort = slice.ports?.find((p) => (p.name ?? "") === name)?.port;
    if (slicePort === undefined) continue;
    for (const ep of slice.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      for (const address of ep.addresses) {
        all.push(
          ep.zone ? { address, port: slicePort, zone: ep.zone } : { address, port: slicePort },
        );
      }
    }
  }
  // A stable sort keeps listings of one address and port in order: the last of each run stays.
  all.sort(byAddress);
  let kept = 0;
  for (let i = 0; i < all.length; i++) {
    const next = all[i + 1];
    if (next && next.address === all[i].address && next.port === all[i].port) continue;
    all[kept++] = all[i];
  }
  all.length = kept;
  return all;
}

/**
 * Why `port` cannot carry a route's traffic, or undefined: an L4 route's `transport` must be the
 * port's protocol; an HTTP or gRPC route needs TCP and an HTTP appProtocol (or none).
 */
export function protocolProblem(
  what: string,
  port: ServicePort,
  transport: "TCP" | "UDP" | undefined,
): string | undefined {
  const protocol = port.protocol ?? "TCP", app = port.appProtocol ?? "";
  if (transport) {
    return protocol !== transport
      ? `${what} port ${port.port} is ${protocol}, not ${transport}`
      : undefined;
  }
  if (protocol !== "TCP" || !SUPPORTED_APP_PROTOCOLS.has(app)) {
    return `${what} port ${port.port} speaks ${protocol}${app ? `/${app}` : ""}, not HTTP`;
  }
  return undefined;
}

/** The port numbered `n` of a port list. */
export function portNumbered(ports: ServicePort[] | undefined, n: number | undefined) {
  for (let i = 0; i < (ports?.length ?? 0); i++) if (ports![i].port === n) return ports![i];
  return undefined;
}
