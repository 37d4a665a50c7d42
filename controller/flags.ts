/**
 * The controller's flags turned into its options, with an error that names the flag for a bad
 * value (the webhook's and the clusterset's flag groups).
 * @module
 */
import { podWebhookDefaults } from "./webhook/mod.ts";
import { EtcdKv, originProblem } from "../lib/registry/mod.ts";
import { gatewayAddressProblem } from "../lib/mcs/mod.ts";

const w = podWebhookDefaults("");

/** Milliseconds from a flag given in seconds (> 0), or the default. */
export function seconds(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!(n > 0)) throw new Error(`--${flag} must be a positive number of seconds, got ${v}`);
  return n * 1000;
}

/** A positive number from a flag, or the default. */
export function positive(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!(n > 0)) throw new Error(`--${flag} must be a positive number, got ${v}`);
  return n;
}

/** A whole number (0 included) from a flag. */
export function wholeNumber(flag: string, v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n)) {
    throw new Error(`--${flag} must be a whole number (0 or more), got ${v}`);
  }
  return n;
}

/** The webhook's options from its flags. */
export function podWebhookFlags(
  v: Record<string, string | boolean | undefined>,
  leaseNamespace: string,
) {
  const [hostname, port] = String(v["webhook-address"]).split(/:(?=\d+$)/);
  const ndots = v["pod-ndots"] === undefined ? w.ndots : Number(v["pod-ndots"]);
  if (!Number.isInteger(ndots) || ndots < 1 || ndots > 15) {
    throw new Error(`--pod-ndots must be an integer from 1 to 15 (resolv.conf caps it at 15)`);
  }
  if (!port) throw new Error(`--webhook-address must be host:port, got ${v["webhook-address"]}`);
  return {
    ...podWebhookDefaults(String(v["webhook-namespace"] ?? leaseNamespace)),
    hostname: hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(port),
    serviceName: String(v["webhook-service"]),
    secretName: String(v["webhook-secret"]),
    configName: String(v["webhook-configuration"]),
    ndots,
    excludedNamespaces: String(v["webhook-excluded-namespaces"]).split(",").map((s) => s.trim())
      .filter(Boolean),
  };
}

/**
 * The MCS options from --registry-url, --region, --cluster, --registry-lease-ttl,
 * --trust-domain, --east-west-gateway.
 */
export function mcsFlags(v: Record<string, string | boolean | undefined>) {
  const gateway = v["east-west-gateway"] as string | undefined;
  if (gateway !== undefined) {
    const problem = gatewayAddressProblem(gateway);
    if (problem) throw new Error(`--east-west-gateway: ${problem}`);
  }
  if (v["registry-url"] === undefined) {
    if (gateway !== undefined) throw new Error("--east-west-gateway needs --registry-url");
    if (v.region !== undefined || v.cluster !== undefined) {
      throw new Error("--region and --cluster need --registry-url (the clusterset registry)");
    }
    return {};
  }
  const origin = { region: String(v.region ?? ""), cluster: String(v.cluster ?? "") };
  const problem = originProblem(origin);
  if (problem) throw new Error(`--registry-url needs --region and --cluster: ${problem}`);
  return {
    mcs: {
      kv: new EtcdKv({ url: String(v["registry-url"]) }),
      origin,
      ttlSeconds: positive("registry-lease-ttl", v["registry-lease-ttl"] as string | undefined, 10),
      ...(v["trust-domain"] ? { trustDomain: String(v["trust-domain"]) } : {}),
      ...(gateway !== undefined ? { eastWestGateway: gateway } : {}),
    },
  };
}
