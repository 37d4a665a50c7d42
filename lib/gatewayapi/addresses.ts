/**
 * Gateway `spec.addresses`: the addresses a Gateway's listeners bind. Only type IPAddress is
 * supported (another type: Accepted=False UnsupportedAddress); an address this host cannot bind
 * (not in the usable list) makes the Gateway Programmed=False AddressNotUsable and binds nothing.
 * No addresses (or an IPAddress without a value) means the default bind address.
 * @module
 */
import { fail, type Outcome } from "./status/mod.ts";
import type { GatewaySpec } from "./types.ts";

/** Addresses usable when resolve is not told otherwise: loopback (IPv4 127.0.0.0/8 and ::1). */
export const LOOPBACK_ADDRESSES: readonly string[] = ["127.0.0.0/8", "::1"];

/** The addresses a Gateway binds, or why it binds none. */
export interface GatewayAddresses {
  /** Sorted, deduplicated; empty when `problem` is set. */
  bind: string[];
  /** UnsupportedAddress (for Accepted) or AddressNotUsable (for Programmed). */
  problem?: Outcome & { condition: "Accepted" | "Programmed" };
}

function ipv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return ((octets[0] << 24) >>> 0) + (octets[1] << 16) + (octets[2] << 8) + octets[3];
}

/** Whether `ip` is one of `usable`: an address, or an IPv4 CIDR `a.b.c.d/n`. */
export function addressUsable(ip: string, usable: readonly string[]): boolean {
  const v4 = ipv4(ip);
  return usable.some((entry) => {
    if (entry === ip) return true;
    const [net, bits] = entry.split("/");
    const n = ipv4(net);
    if (v4 === undefined || n === undefined || bits === undefined) return false;
    const len = Number(bits);
    if (!Number.isInteger(len) || len < 0 || len > 32) return false;
    const mask = len === 0 ? 0 : (~0 << (32 - len)) >>> 0;
    return ((v4 & mask) >>> 0) === ((n & mask) >>> 0);
  });
}

/** Evaluates a Gateway's `spec.addresses` against the addresses this host can bind. */
export function gatewayAddresses(
  spec: GatewaySpec,
  bindAddress: string,
  usable: readonly string[],
): GatewayAddresses {
  const asked = spec.addresses ?? [];
  if (asked.length === 0) return { bind: [bindAddress] };
  const other = asked.filter((a) => (a.type ?? "IPAddress") !== "IPAddress");
  if (other.length > 0) {
    return {
      bind: [],
      problem: {
        ...fail(
          "UnsupportedAddress",
          `address type ${other[0].type} is not supported: use IPAddress`,
        ),
        condition: "Accepted",
      },
    };
  }
  const values = [...new Set(asked.map((a) => a.value || bindAddress))].sort();
  const bad = values.filter((v) => !addressUsable(v, usable));
  if (bad.length > 0) {
    return {
      bind: [],
      problem: {
        ...fail(
          "AddressNotUsable",
          `address ${bad.join(", ")} cannot be bound on this host (usable: ${
            usable.join(", ")
          }); remove it from spec.addresses or run the agent where it is assigned`,
        ),
        condition: "Programmed",
      },
    };
  }
  return { bind: values };
}
