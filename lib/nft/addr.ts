/**
 * IP addresses as nftables reads and prints them: parsing (dotted quad; IPv6 with `::` and an
 * embedded IPv4 tail), the canonical text nft lists (glibc `inet_ntop`: lower case, the longest
 * run of two or more zero groups as `::`, the leftmost on a tie, `::ffff:a.b.c.d` and `::a.b.c.d`
 * with a dotted tail), and a total order (IPv4 before IPv6, then by bytes) for deterministic sets.
 * @module
 */

/** A parsed address: its family, its canonical text and a key that orders it by bytes. */
export interface IpAddress {
  family: 4 | 6;
  text: string;
  /** Its bytes in hex, fixed width (8 or 32 digits): comparing keys compares bytes. */
  key: string;
}

/** Two hex digits per byte value. */
const HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, i) => i.toString(16).padStart(2, "0"),
);

/** The four bytes of a dotted quad (plain numbers: cheaper than a small typed array). */
function ipv4Bytes(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out = [0, 0, 0, 0];
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    // Digits only, no leading zero (octal in some parsers), at most 255.
    if (p.length === 0 || p.length > 3 || (p.length > 1 && p.charCodeAt(0) === 48)) {
      return undefined;
    }
    let n = 0;
    for (let j = 0; j < p.length; j++) {
      const d = p.charCodeAt(j) - 48;
      if (d < 0 || d > 9) return undefined;
      n = n * 10 + d;
    }
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function groupsOf(part: string): number[] | undefined {
  if (part === "") return [];
  const out: number[] = [];
  for (const g of part.split(":")) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    out.push(parseInt(g, 16));
  }
  return out;
}

function ipv6Bytes(s: string): number[] | undefined {
  let text = s;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    const v4 = ipv4Bytes(s.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
    // What precedes the dotted tail; a "::" right before it stays whole ("::1.2.3.4").
    text = s.slice(0, lastColon);
    if (text.endsWith(":")) text = s.slice(0, lastColon + 1);
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0]);
  const rest = halves.length === 2 ? groupsOf(halves[1]) : [];
  if (!head || !rest) return undefined;
  const given = head.length + rest.length + tail.length;
  let groups: number[];
  if (halves.length === 2) {
    if (given > 7) return undefined;
    groups = [...head, ...new Array(8 - given).fill(0), ...rest, ...tail];
  } else {
    if (given !== 8) return undefined;
    groups = [...head, ...tail];
  }
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** The text glibc's `inet_ntop(AF_INET6)` gives (what nft lists). */
function ipv6Text(b: number[]): string {
  const w = Array.from({ length: 8 }, (_, i) => (b[2 * i] << 8) | b[2 * i + 1]);
  let best = { base: -1, len: 0 };
  let cur = { base: -1, len: 0 };
  for (let i = 0; i < 8; i++) {
    if (w[i] === 0) {
      cur = cur.base === -1 ? { base: i, len: 1 } : { base: cur.base, len: cur.len + 1 };
      if (cur.len > best.len) best = cur;
    } else cur = { base: -1, len: 0 };
  }
  if (best.len < 2) best = { base: -1, len: 0 };
  const dotted = best.base === 0 && (best.len === 6 || (best.len === 5 && w[5] === 0xffff));
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (best.base !== -1 && i >= best.base && i < best.base + best.len) {
      if (i === best.base) out += ":";
      continue;
    }
    if (i !== 0) out += ":";
    if (i === 6 && dotted) return out + `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
    out += w[i].toString(16);
  }
  if (best.base !== -1 && best.base + best.len === 8) out += ":";
  return out;
}

/** Parses an IPv4 or IPv6 address (no zone, no prefix); undefined when it is neither. */
export function parseIp(s: string): IpAddress | undefined {
  if (typeof s !== "string") return undefined;
  const v4 = ipv4Bytes(s);
  // A valid dotted quad is its own canonical text (no leading zeros were accepted).
  if (v4) return { family: 4, text: s, key: HEX[v4[0]] + HEX[v4[1]] + HEX[v4[2]] + HEX[v4[3]] };
  if (!s.includes(":")) return undefined;
  const v6 = ipv6Bytes(s);
  return v6 ? { family: 6, text: ipv6Text(v6), key: v6.map((x) => HEX[x]).join("") } : undefined;
}

/** Orders addresses: IPv4 before IPv6, then by their bytes. */
export function compareIp(a: IpAddress, b: IpAddress): number {
  if (a.family !== b.family) return a.family - b.family;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
