/**
 * The libnftables JSON documents for a pod's `inet aether` table (one document = one kernel
 * batch = atomic): the full replace (`add table` + `delete table` + `add table` + sets, chain,
 * rules, elements: nft 1.0.6 has no `destroy`), the incremental set sync between two specs (new
 * elements added, only known-present ones deleted: one absent element fails the whole batch on
 * 1.0.6), the removal, and the listing. Pure, no I/O.
 *
 * The table (Istio ambient's in-pod redirection, our own rules): chain `output` (nat, hook
 * output, priority -100); DNS to the cluster DNS servers (UDP and TCP :53) → DNAT to the node's
 * responder, then TCP to a mesh VIP:port → `redirect to :<capturePort>`, then (when the spec
 * has UDP redirects) UDP to a VIP:port of the map `udp-vips4`/`udp-vips6` → `redirect to` that
 * entry's local port; everything else, pod IPs included, untouched; no inbound rule.
 * @module
 */
import { type CaptureSpec, familyOf, normalizeSpec } from "./spec.ts";

/** One libnftables JSON command (`{"add": {"table": …}}`, …). */
export type NftCommand = Record<string, unknown>;

/** A libnftables JSON command document. */
export interface NftDocument {
  nftables: NftCommand[];
}

/** The table's family and name. */
export const TABLE = { family: "inet", name: "aether" } as const;

/** The table's only chain. */
export const CHAIN = {
  name: "output",
  type: "nat",
  hook: "output",
  prio: -100,
  policy: "accept",
} as const;

/** Set names by purpose and family. */
export const SETS = {
  vips4: "mesh-vips4",
  vips6: "mesh-vips6",
  dns4: "dns-servers4",
  dns6: "dns-servers6",
} as const;

/** Map names by family: UDP VIP . port → the local port of its listener. */
export const MAPS = { udp4: "udp-vips4", udp6: "udp-vips6" } as const;

/** Rule comments (shown by `nft list`; the parser does not need them). */
export const COMMENTS = {
  vips: "aether: mesh VIP:port to the capture listener",
  dns: "aether: cluster DNS to the agent's responder",
  udp: "aether: mesh UDP VIP:port to its listener",
} as const;

const ref = { family: TABLE.family, table: TABLE.name };

function vipElements(spec: CaptureSpec, family: 4 | 6): unknown[] {
  return spec.vips.filter((v) => familyOf(v.address) === family).map((v) => ({
    concat: [v.address, v.port],
  }));
}

function dnsElements(spec: CaptureSpec, family: 4 | 6): unknown[] {
  return (spec.dns?.servers ?? []).filter((s) => familyOf(s) === family);
}

/** The DNS families a (canonical) spec redirects: those with a redirect address. */
function dnsFamilies(spec: CaptureSpec): (4 | 6)[] {
  return ([4, 6] as const).filter((f) => spec.dns?.addresses.some((a) => familyOf(a) === f));
}

function udpElements(spec: CaptureSpec, family: 4 | 6): unknown[] {
  return (spec.udp ?? []).filter((u) => familyOf(u.address) === family).map((u) => [
    { concat: [u.address, u.port] },
    u.to,
  ]);
}

/** The families a (canonical) spec redirects UDP for. */
function udpFamilies(spec: CaptureSpec): (4 | 6)[] {
  return ([4, 6] as const).filter((f) => (spec.udp ?? []).some((u) => familyOf(u.address) === f));
}

function daddr(family: 4 | 6) {
  return { payload: { protocol: family === 4 ? "ip" : "ip6", field: "daddr" } };
}

function vipRule(family: 4 | 6, capturePort: number): NftCommand {
  return {
    rule: {
      ...ref,
      chain: CHAIN.name,
      comment: COMMENTS.vips,
      expr: [
        {
          match: {
            op: "==",
            left: { concat: [daddr(family), { payload: { protocol: "tcp", field: "dport" } }] },
            right: `@${family === 4 ? SETS.vips4 : SETS.vips6}`,
          },
        },
        { counter: null },
        { redirect: { port: capturePort } },
      ],
    },
  };
}

function dnsRule(family: 4 | 6, to: string, port: number): NftCommand {
  return {
    rule: {
      ...ref,
      chain: CHAIN.name,
      comment: COMMENTS.dns,
      expr: [
        { match: { op: "==", left: { meta: { key: "l4proto" } }, right: { set: ["tcp", "udp"] } } },
        {
          match: {
            op: "==",
            left: daddr(family),
            right: `@${family === 4 ? SETS.dns4 : SETS.dns6}`,
          },
        },
        { match: { op: "==", left: { payload: { protocol: "th", field: "dport" } }, right: 53 } },
        { counter: null },
        { dnat: { family: family === 4 ? "ip" : "ip6", addr: to, port } },
      ],
    },
  };
}

function udpRule(family: 4 | 6): NftCommand {
  const key = { concat: [daddr(family), { payload: { protocol: "udp", field: "dport" } }] };
  return {
    rule: {
      ...ref,
      chain: CHAIN.name,
      comment: COMMENTS.udp,
      expr: [
        { match: { op: "==", left: { meta: { key: "l4proto" } }, right: "udp" } },
        { counter: null },
        { redirect: { port: { map: { key, data: `@${family === 4 ? MAPS.udp4 : MAPS.udp6}` } } } },
      ],
    },
  };
}

function udpMap(family: 4 | 6): NftCommand {
  return {
    add: {
      map: {
        ...ref,
        name: family === 4 ? MAPS.udp4 : MAPS.udp6,
        type: [`ipv${family}_addr`, "inet_service"],
        map: "inet_service",
      },
    },
  };
}

function set(name: string, type: string | string[]): NftCommand {
  return { add: { set: { ...ref, name, type } } };
}

function elements(op: "add" | "delete", name: string, elem: unknown[]): NftCommand[] {
  return elem.length === 0 ? [] : [{ [op]: { element: { ...ref, name, elem } } }];
}

/**
 * The document that replaces the table with what `spec` says, atomically, whether or not the
 * table exists. Throws NftSpecError for an invalid spec.
 */
export function replaceTable(input: CaptureSpec): NftDocument {
  const spec = normalizeSpec(input);
  const table = { table: { ...TABLE } };
  const cmds: NftCommand[] = [{ add: table }, { delete: table }, { add: table }];
  cmds.push(set(SETS.vips4, ["ipv4_addr", "inet_service"]));
  cmds.push(set(SETS.vips6, ["ipv6_addr", "inet_service"]));
  const dns = dnsFamilies(spec), udp = udpFamilies(spec);
  for (const f of dns) cmds.push(set(f === 4 ? SETS.dns4 : SETS.dns6, `ipv${f}_addr`));
  for (const f of udp) cmds.push(udpMap(f));
  cmds.push({ add: { chain: { ...ref, ...CHAIN } } });
  for (const f of dns) {
    const to = spec.dns!.addresses.find((a) => familyOf(a) === f)!;
    cmds.push({ add: dnsRule(f, to, spec.dns!.port) });
  }
  cmds.push({ add: vipRule(4, spec.capturePort) }, { add: vipRule(6, spec.capturePort) });
  for (const f of udp) cmds.push({ add: udpRule(f) });
  cmds.push(...elements("add", SETS.vips4, vipElements(spec, 4)));
  cmds.push(...elements("add", SETS.vips6, vipElements(spec, 6)));
  for (const f of dns) {
    cmds.push(...elements("add", f === 4 ? SETS.dns4 : SETS.dns6, dnsElements(spec, f)));
  }
  for (const f of udp) {
    cmds.push(...elements("add", f === 4 ? MAPS.udp4 : MAPS.udp6, udpElements(spec, f)));
  }
  return { nftables: cmds };
}

/** The document that removes the table, atomically, whether or not it exists. */
export function deleteTable(): NftDocument {
  const table = { table: { ...TABLE } };
  return { nftables: [{ add: table }, { delete: table }] };
}

/** The document that lists the table (`nft -j list table inet aether`). */
export function listTable(): NftDocument {
  return { nftables: [{ list: { table: { ...TABLE } } }] };
}

/**
 * Whether a table made for `a` can become one for `b` by set elements alone: same capture port,
 * same DNS redirect (families, addresses, port). Both canonical.
 */
function sameShape(a: CaptureSpec, b: CaptureSpec): boolean {
  if (a.capturePort !== b.capturePort) return false;
  if (udpFamilies(a).join() !== udpFamilies(b).join()) return false;
  if (!a.dns || !b.dns) return !a.dns && !b.dns;
  return a.dns.port === b.dns.port && a.dns.addresses.join() === b.dns.addresses.join();
}

/**
 * An element's identity within its set or map (canonical address text, and port; a map element
 * with its value, so a changed value is a delete and an add).
 */
function elementKey(e: unknown): string {
  if (typeof e === "string") return e;
  if (Array.isArray(e)) return `${elementKey(e[0])} : ${e[1]}`;
  return (e as { concat: [string, number] }).concat.join(" ");
}

function diff(from: unknown[], to: unknown[]): { added: unknown[]; gone: unknown[] } {
  const had = new Set(from.map(elementKey)), has = new Set(to.map(elementKey));
  return {
    added: to.filter((e) => !had.has(elementKey(e))),
    gone: from.filter((e) => !has.has(elementKey(e))),
  };
}

/**
 * The document that turns the table made for `from` into the one for `to` by set elements
 * alone: the elements of `to` that `from` lacks are added, those of `from` that `to` lacks are
 * deleted (so every delete names an element the table has, if it is `from`'s). Empty (no
 * command) when nothing changes; undefined when the two differ in more than elements (capture
 * port, DNS redirect target or families): then replace the table. Throws NftSpecError for an
 * invalid spec.
 */
export function syncSets(fromInput: CaptureSpec, toInput: CaptureSpec): NftDocument | undefined {
  const from = normalizeSpec(fromInput), to = normalizeSpec(toInput);
  if (!sameShape(from, to)) return undefined;
  const adds: NftCommand[] = [], deletes: NftCommand[] = [];
  const sets: [string, unknown[], unknown[]][] = [
    [SETS.vips4, vipElements(from, 4), vipElements(to, 4)],
    [SETS.vips6, vipElements(from, 6), vipElements(to, 6)],
  ];
  for (const f of dnsFamilies(to)) {
    sets.push([f === 4 ? SETS.dns4 : SETS.dns6, dnsElements(from, f), dnsElements(to, f)]);
  }
  for (const [name, had, has] of sets) {
    const d = diff(had, has);
    adds.push(...elements("add", name, d.added));
    deletes.push(...elements("delete", name, d.gone));
  }
  // A map element is deleted by its key (before the add of a changed value under that key).
  const mapDeletes: NftCommand[] = [];
  for (const f of udpFamilies(to)) {
    const name = f === 4 ? MAPS.udp4 : MAPS.udp6;
    const d = diff(udpElements(from, f), udpElements(to, f));
    mapDeletes.push(...elements("delete", name, d.gone.map((e) => (e as unknown[])[0])));
    adds.push(...elements("add", name, d.added));
  }
  return { nftables: [...mapDeletes, ...adds, ...deletes] };
}
