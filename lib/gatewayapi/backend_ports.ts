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

/** The ready endpoints of `port` in `slices`, by address then port. */
export function readyEndpoints(
  slices: readonly (KubeObject & EndpointSliceBody)[],
  port: ServicePort,
): IREndpoint[] {
  const out = new Map<string, IREndpoint>();
  for (const slice of slices) {
    if (slice.addressType === "FQDN") continue;
    const slicePort = (slice.ports ?? []).find((p) => (p.name ?? "") === (port.name ?? ""));
    if (slicePort?.port === undefined) continue;
    for (const ep of slice.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      for (const address of ep.addresses) {
        out.set(`${address}|${slicePort.port}`, {
          address,
          port: slicePort.port,
          ...(ep.zone ? { zone: ep.zone } : {}),
        });
      }
    }
  }
  return [...out.values()].sort((
    a,
    b,
  ) => (a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port));
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
