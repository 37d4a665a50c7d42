/**
 * Reads `nft -j list table inet aether` back into the capture spec it implements, for drift
 * detection: the sets' elements and the rules' targets give the spec (canonical, so it compares
 * with the wanted one by `sameSpec`), and everything that is not as the builder makes it — a
 * missing or foreign set, chain or rule, rules out of order, a changed chain — is a problem.
 * A table is as wanted when its spec is the same and it has no problem. Pure, no I/O.
 * @module
 */
import { CHAIN, MAPS, SETS, TABLE } from "./build.ts";
import { type CaptureSpec, normalizeSpec, type UdpRedirect, type VipPort } from "./spec.ts";

/** Packets and bytes a rule (or a kind of rule, summed over families) matched. */
export interface RuleCounter {
  packets: number;
  bytes: number;
}

/** What a listed table does and how it differs from what the builder makes. */
export interface ListedTable {
  /** What its sets and rules do (canonical; capture port 0 when no capture rule is there). */
  spec: CaptureSpec;
  /** Everything not as the builder makes it; empty when the table is exactly ours. */
  problems: string[];
  /** New connections (first packets) captured, and DNS packets redirected, since the replace. */
  counters: { vips: RuleCounter; dns: RuleCounter };
  /** The table's kernel handle (a replace changes it; a set sync does not). */
  handle?: number;
}

/** A listing that is not libnftables JSON. */
export class NftParseError extends Error {
  override name = "NftParseError";
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

type Kind = "dns4" | "dns6" | "vips4" | "vips6";
type UdpKind = "udp4" | "udp6";
interface Rule {
  kind: Kind | UdpKind;
  /** Redirect port (vips) or DNAT port (dns). */
  port: number;
  /** DNAT address (dns). */
  to?: string;
  counter: RuleCounter;
}

function daddrFamily(left: unknown): 4 | 6 | undefined {
  if (!isObj(left) || !isObj(left.payload) || left.payload.field !== "daddr") return undefined;
  return left.payload.protocol === "ip" ? 4 : left.payload.protocol === "ip6" ? 6 : undefined;
}

function counterOf(expr: unknown[]): RuleCounter {
  const c = expr.find((e) => isObj(e) && "counter" in e) as Obj | undefined;
  const v = isObj(c?.counter) ? c.counter as Obj : {};
  return { packets: Number(v.packets ?? 0), bytes: Number(v.bytes ?? 0) };
}

/** IANA protocol numbers of the names nft lists `meta l4proto` values by. */
const PROTO_NUMBERS: Readonly<Record<string, number>> = { tcp: 6, udp: 17 };

/**
 * Whether an `l4proto` value is protocol `name`: nft lists it by name, or by number when
 * libnftables did not resolve the name (seen 2026-12-07 for some pods' tables in the node agent:
 * `{"set": [6, 17]}`, taken for a foreign rule, so the table was "repaired" every 30 s forever).
 */
const isProto = (v: unknown, name: string) => v === name || v === PROTO_NUMBERS[name];

/** Whether an `l4proto` match's right side is the set {tcp, udp}, by name or by number. */
function isTcpUdpSet(v: unknown): boolean {
  const set = isObj(v) && Array.isArray(v.set) ? v.set : undefined;
  return set?.length === 2 && isProto(set[0], "tcp") && isProto(set[1], "udp");
}

/**
 * Our UDP rule (`meta l4proto udp redirect to ip daddr . udp dport map @udp-vips4`; nft lists the
 * `meta nfproto` it adds for the inet family too), or undefined.
 */
function udpRuleOf(expr: Obj[], counter: RuleCounter): Rule | undefined {
  const m = expr.map((e) => isObj(e.match) ? e.match as Obj : undefined);
  if (!m[0] || !same(m[0].left, { meta: { key: "l4proto" } }) || !isProto(m[0].right, "udp")) {
    return undefined;
  }
  const last = expr[expr.length - 1];
  const port = isObj(last?.redirect) ? (last.redirect as Obj).port : undefined;
  const map = isObj(port) && isObj(port.map) ? port.map as Obj : undefined;
  const key = isObj(map?.key) ? map.key as Obj : undefined;
  if (!key || !Array.isArray(key.concat) || key.concat.length !== 2) return undefined;
  const family = daddrFamily(key.concat[0]);
  if (!family || !same(key.concat[1], { payload: { protocol: "udp", field: "dport" } })) {
    return undefined;
  }
  const kind = family === 4 ? "udp4" : "udp6";
  const nfproto = family === 4 ? "ipv4" : "ipv6";
  const middle = expr.slice(1, -1);
  const okMiddle = middle.length === 0 ||
    (middle.length === 1 && same(m[1]?.left, { meta: { key: "nfproto" } }) &&
      m[1]?.right === nfproto);
  return okMiddle && map!.data === `@${MAPS[kind]}` ? { kind, port: 0, counter } : undefined;
}

/** The kind of one of our rules, or undefined for any other rule. */
function ruleOf(exprIn: unknown): Rule | undefined {
  if (!Array.isArray(exprIn)) return undefined;
  const counter = counterOf(exprIn);
  const expr = exprIn.filter((e) => !(isObj(e) && "counter" in e)) as Obj[];
  const udp = udpRuleOf(expr, counter);
  if (udp) return udp;
  const m = expr.map((e) => isObj(e.match) ? e.match as Obj : undefined);
  if (expr.length === 2 && m[0]?.op === "==" && isObj(expr[1].redirect)) {
    const left = m[0].left, port = (expr[1].redirect as Obj).port;
    if (!isObj(left) || !Array.isArray(left.concat) || left.concat.length !== 2) return undefined;
    const family = daddrFamily(left.concat[0]);
    if (!family || !same(left.concat[1], { payload: { protocol: "tcp", field: "dport" } })) {
      return undefined;
    }
    const kind = family === 4 ? "vips4" : "vips6";
    if (m[0].right !== `@${SETS[kind]}` || typeof port !== "number") return undefined;
    return { kind, port, counter };
  }
  if (expr.length === 4 && m.slice(0, 3).every((x) => x?.op === "==") && isObj(expr[3].dnat)) {
    const dnat = expr[3].dnat as Obj;
    const family = daddrFamily(m[1]!.left);
    if (!family) return undefined;
    const kind = family === 4 ? "dns4" : "dns6";
    const ok = same(m[0]!.left, { meta: { key: "l4proto" } }) &&
      isTcpUdpSet(m[0]!.right) && m[1]!.right === `@${SETS[kind]}` &&
      same(m[2]!.left, { payload: { protocol: "th", field: "dport" } }) && m[2]!.right === 53 &&
      dnat.family === (family === 4 ? "ip" : "ip6") && typeof dnat.addr === "string" &&
      typeof dnat.port === "number";
    return ok ? { kind, port: dnat.port as number, to: dnat.addr as string, counter } : undefined;
  }
  return undefined;
}

/** One element of a set as listed: a value, or `{"elem": {"val": …}}` when it has extras. */
function elementValue(e: unknown): unknown {
  return isObj(e) && isObj(e.elem) ? e.elem.val : e;
}

function vipOf(e: unknown): VipPort | undefined {
  const v = elementValue(e);
  if (!isObj(v) || !Array.isArray(v.concat) || v.concat.length !== 2) return undefined;
  const [address, port] = v.concat;
  return typeof address === "string" && typeof port === "number" ? { address, port } : undefined;
}

/** One UDP map element as listed: `[{"concat": [address, port]}, localPort]`. */
function udpOf(e: unknown): UdpRedirect | undefined {
  if (!Array.isArray(e) || e.length !== 2 || typeof e[1] !== "number") return undefined;
  const v = vipOf(e[0]);
  return v ? { ...v, to: e[1] } : undefined;
}

const SET_TYPES: Record<Kind, unknown> = {
  vips4: ["ipv4_addr", "inet_service"],
  vips6: ["ipv6_addr", "inet_service"],
  dns4: "ipv4_addr",
  dns6: "ipv6_addr",
};

/** The listing's table `inet aether` read back, or undefined when the listing has no such table. */
export function parseTable(listing: string | unknown): ListedTable | undefined {
  let doc = listing;
  if (typeof listing === "string") {
    try {
      doc = JSON.parse(listing);
    } catch (e) {
      throw new NftParseError(`nft listing is not JSON: ${(e as Error).message}`);
    }
  }
  if (!isObj(doc) || !Array.isArray(doc.nftables)) {
    throw new NftParseError('nft listing is not a libnftables JSON document ({"nftables": […]})');
  }
  const ours = (o: Obj) => o.family === TABLE.family && (o.table ?? o.name) === TABLE.name;
  const problems: string[] = [];
  let handle: number | undefined;
  let found = false;
  const sets = new Map<Kind, unknown[]>();
  const maps = new Map<UdpKind, unknown[]>();
  const rules: Rule[] = [];
  const kindOfSet = Object.fromEntries(Object.entries(SETS).map(([k, n]) => [n, k as Kind]));
  const kindOfMap = Object.fromEntries(Object.entries(MAPS).map(([k, n]) => [n, k as UdpKind]));
  for (const item of doc.nftables) {
    if (!isObj(item)) continue;
    const [what, body] = Object.entries(item)[0] ?? [];
    if (what === "metainfo" || !isObj(body)) continue;
    if (what === "table") {
      if (!ours(body)) continue;
      found = true;
      if (typeof body.handle === "number") handle = body.handle;
      continue;
    }
    if (body.family !== TABLE.family || body.table !== TABLE.name) continue;
    const name = String(body.name ?? body.chain ?? "");
    if (what === "set") {
      const kind = kindOfSet[name];
      if (!kind) problems.push(`foreign set ${name}`);
      else if (!same(body.type, SET_TYPES[kind]) || body.flags !== undefined) {
        problems.push(`set ${name} is not of type ${JSON.stringify(SET_TYPES[kind])}`);
      } else {
        const elem = body.elem === undefined ? [] : [body.elem].flat();
        sets.set(kind, elem.map(elementValue));
      }
    } else if (what === "map") {
      const kind = kindOfMap[name];
      const type = [`ipv${kind === "udp6" ? 6 : 4}_addr`, "inet_service"];
      if (!kind) problems.push(`foreign map ${name}`);
      else if (!same(body.type, type) || body.map !== "inet_service" || body.flags !== undefined) {
        problems.push(`map ${name} is not ${type.join(" . ")} : inet_service`);
      } else maps.set(kind, Array.isArray(body.elem) ? body.elem : []);
    } else if (what === "chain") {
      const want = { name: CHAIN.name, type: CHAIN.type, hook: CHAIN.hook, prio: CHAIN.prio };
      const got = { name, type: body.type, hook: body.hook, prio: body.prio };
      if (name !== CHAIN.name) problems.push(`foreign chain ${name}`);
      else if (!same(got, want) || (body.policy ?? "accept") !== CHAIN.policy) {
        problems.push(`chain ${name} is not ${CHAIN.type} hook ${CHAIN.hook} prio ${CHAIN.prio}`);
      }
    } else if (what === "rule") {
      const rule = body.chain === CHAIN.name ? ruleOf(body.expr) : undefined;
      if (rule) rules.push(rule);
      else {
        // The rule itself, shortened: what to compare with ours when a table keeps drifting.
        const text = JSON.stringify(body.expr) ?? "";
        const shown = text.length > 400 ? `${text.slice(0, 400)}…` : text;
        problems.push(`foreign rule in chain ${body.chain} (handle ${body.handle}): ${shown}`);
      }
    } else {
      problems.push(`foreign ${what} ${name}`);
    }
  }
  if (!found) return undefined;
  const byKind = new Map<Kind | UdpKind, Rule>();
  const nameOf = (k: Kind | UdpKind) => k in MAPS ? MAPS[k as UdpKind] : SETS[k as Kind];
  for (const r of rules) {
    if (byKind.has(r.kind)) problems.push(`rule for ${nameOf(r.kind)} twice`);
    else byKind.set(r.kind, r);
  }
  const order = rules.map((r) => r.kind);
  const want = (["dns4", "dns6", "vips4", "vips6", "udp4", "udp6"] as const).filter((k) =>
    byKind.has(k)
  );
  if (!same(order, want)) problems.push(`rules out of order: ${order.join(", ")}`);
  for (const k of ["vips4", "vips6"] as const) {
    if (!sets.has(k)) problems.push(`set ${SETS[k]} missing`);
    if (!byKind.has(k)) problems.push(`capture rule for ${SETS[k]} missing`);
  }
  for (const k of ["dns4", "dns6"] as const) {
    if (sets.has(k) && !byKind.has(k)) problems.push(`set ${SETS[k]} without its rule`);
    if (byKind.has(k) && !sets.get(k)?.length) problems.push(`DNS rule for empty ${SETS[k]}`);
  }
  const udp: UdpRedirect[] = [];
  for (const k of ["udp4", "udp6"] as const) {
    if (maps.has(k) && !byKind.has(k)) problems.push(`map ${MAPS[k]} without its rule`);
    if (byKind.has(k) && !maps.has(k)) problems.push(`UDP rule without its map ${MAPS[k]}`);
    for (const e of maps.get(k) ?? []) {
      const u = udpOf(e);
      if (u) udp.push(u);
      else problems.push(`element ${JSON.stringify(e)} of ${MAPS[k]} is not address . port : port`);
    }
  }
  const vipRules = [byKind.get("vips4"), byKind.get("vips6")].filter((r) => r !== undefined);
  const capturePort = vipRules[0]?.port ?? 0;
  if (vipRules.some((r) => r.port !== capturePort)) problems.push("capture rules differ in port");
  const vips: VipPort[] = [];
  for (const k of ["vips4", "vips6"] as const) {
    for (const e of sets.get(k) ?? []) {
      const v = vipOf(e);
      if (v) vips.push(v);
      else problems.push(`element ${JSON.stringify(e)} of ${SETS[k]} is not address . port`);
    }
  }
  const dnsRules = [byKind.get("dns4"), byKind.get("dns6")].filter((r) => r !== undefined);
  const servers = dnsRules.flatMap((r) => (sets.get(r.kind as Kind) ?? []).map(String));
  if (dnsRules.some((r) => r.port !== dnsRules[0].port)) problems.push("DNS rules differ in port");
  const raw: CaptureSpec = {
    vips,
    capturePort: capturePort || 1,
    ...(dnsRules.length > 0
      ? { dns: { servers, addresses: dnsRules.map((r) => r.to!), port: dnsRules[0].port } }
      : {}),
    ...(udp.length > 0 ? { udp } : {}),
  };
  let spec: CaptureSpec;
  try {
    spec = { ...normalizeSpec(raw), capturePort };
  } catch (e) {
    problems.push((e as Error).message);
    spec = { vips: [], capturePort };
  }
  const sum = (rs: Rule[]) =>
    rs.reduce((a, r) => ({
      packets: a.packets + r.counter.packets,
      bytes: a.bytes + r.counter.bytes,
    }), { packets: 0, bytes: 0 });
  return {
    spec,
    problems,
    counters: { vips: sum(vipRules), dns: sum(dnsRules) },
    ...(handle !== undefined ? { handle } : {}),
  };
}
