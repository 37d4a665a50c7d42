/**
 * Where captured pods' DNS goes (`agent node --capture-dns`): the cluster DNS servers, by IP or by
 * their Service, whose queries each captured pod's table sends to this agent's responder.
 * @module
 */
import { parseIp } from "../../lib/nft/mod.ts";
import type { MeshSpecOptions } from "../capture/mod.ts";

/**
 * Where captured pods' DNS goes: the cluster DNS servers' queries to this agent's responder
 * (`--dns-address`); none without `--capture-dns` or without a responder. A `--capture-dns` entry
 * that is no IP names a Service (`<namespace>/<name>`) whose cluster IPs are servers.
 */
export function captureDnsRedirect(
  opts: { captureDns?: string[]; dnsAddress: string },
): Pick<MeshSpecOptions, "dns" | "dnsServices"> {
  if (!opts.captureDns?.length || opts.dnsAddress === "none") return {};
  const servers = opts.captureDns.filter((e) => parseIp(e) !== undefined);
  const services = opts.captureDns.filter((e) => parseIp(e) === undefined);
  for (const s of services) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s)) {
      throw new Error(
        `--capture-dns ${s}: want a cluster DNS server IP or its Service as <namespace>/<name> ` +
          `(e.g. kube-system/kube-dns)`,
      );
    }
  }
  const at = opts.dnsAddress.lastIndexOf(":");
  const address = opts.dnsAddress.slice(0, at).replace(/^\[|\]$/g, "");
  const port = Number(opts.dnsAddress.slice(at + 1));
  if (at < 0 || !Number.isInteger(port)) {
    throw new Error(`--dns-address ${opts.dnsAddress}: want <ip>:<port> to redirect pods' DNS`);
  }
  if (address === "127.0.0.1" || address === "::1") {
    throw new Error(
      `--capture-dns needs --dns-address on a node address (a pod cannot reach the node's ` +
        `loopback), not ${opts.dnsAddress}`,
    );
  }
  return {
    dns: { servers, addresses: [address], port },
    ...(services.length > 0 ? { dnsServices: services } : {}),
  };
}
