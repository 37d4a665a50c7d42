/**
 * Knot DNS (Debian `knot`) as an authoritative upstream for the relay tests: a primary that takes
 * UPDATE (TSIG-signed), serves AXFR/IXFR, and a secondary that refreshes on NOTIFY. Not part of
 * the agent.
 * @module
 */
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { freePort, udpQuery } from "./_test_utils.ts";

/** A TSIG key: `nsupdate -y hmac-sha256:<name>:<secret>`. */
export interface TsigKey {
  name: string;
  /** Base64. */
  secret: string;
}

/** One zone served by the instance. */
export interface KnotZone {
  domain: string;
  /** Zone file lines (primary); absent: a secondary of `primary`. */
  records?: string[];
  /** Address and port of the primary this zone is transferred from. */
  primary?: { address: string; port: number };
}

/** A running knotd. */
export interface Knot {
  address: string;
  port: number;
  /** Everything knotd logged so far. */
  log(): string;
  /** Waits until the log matches `re` (a condition; fails after `ms`). */
  waitLog(re: RegExp, ms?: number): Promise<void>;
  stop(): Promise<void>;
}

function config(dir: string, port: number, zones: KnotZone[], key?: TsigKey): string {
  const remotes = zones.filter((z) => z.primary).map((z, i) =>
    `  - id: primary${i}\n    address: ${z.primary!.address}@${z.primary!.port}`
  );
  let secondary = 0;
  return [
    "server:",
    `  rundir: "${dir}"`,
    `  listen: 127.0.0.1@${port}`,
    "log:",
    "  - target: stderr",
    "    any: info",
    "database:",
    `  storage: "${dir}"`,
    ...(key
      ? ["key:", `  - id: ${key.name}`, "    algorithm: hmac-sha256", `    secret: ${key.secret}`]
      : []),
    ...(remotes.length ? ["remote:", ...remotes] : []),
    "acl:",
    ...(key
      ? [`  - id: update`, "    address: 127.0.0.0/8", `    key: ${key.name}`, "    action: update"]
      : []),
    "  - id: notify",
    "    address: 127.0.0.0/8",
    "    action: notify",
    "  - id: transfer",
    "    address: 127.0.0.0/8",
    "    action: transfer",
    "template:",
    "  - id: default",
    `    storage: "${dir}"`,
    '    file: "%s.zone"',
    "    zonefile-sync: -1",
    "    semantic-checks: off",
    "zone:",
    ...zones.flatMap((z) => [
      `  - domain: ${z.domain}`,
      ...(z.primary ? [`    master: primary${secondary++}`] : []),
      `    acl: [${[...(key ? ["update"] : []), "notify", "transfer"].join(", ")}]`,
    ]),
  ].join("\n") + "\n";
}

/** `<domain>. SOA` as a raw query (for the readiness probe). */
function soaQuery(domain: string): Uint8Array {
  const labels = domain.split(".").flatMap((l) => [l.length, ...new TextEncoder().encode(l)]);
  return new Uint8Array([0x4b, 0x1d, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, ...labels, 0, 0, 6, 0, 1]);
}

/**
 * Starts knotd on 127.0.0.1 (a free port) serving `zones`; ready when every zone answers its SOA
 * with NOERROR (a secondary: once it has transferred the zone).
 */
export async function startKnot(zones: KnotZone[], key?: TsigKey): Promise<Knot> {
  const bin = await ensurePeer("knot");
  const dir = await Deno.makeTempDir({ prefix: "aether-knot-" });
  const port = await freePort();
  await Deno.writeTextFile(join(dir, "knot.conf"), config(dir, port, zones, key));
  for (const z of zones) {
    if (z.records) {
      await Deno.writeTextFile(join(dir, `${z.domain}.zone`), z.records.join("\n") + "\n");
    }
  }
  const child = new Deno.Command(bin, {
    args: ["-c", join(dir, "knot.conf")],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let log = "";
  let exited = false;
  const reading = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) log += dec.decode(chunk, { stream: true });
  })();
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const waitLog = async (re: RegExp, ms = 30_000) => {
    const deadline = Date.now() + ms;
    while (!re.test(log)) {
      if (exited || Date.now() > deadline) {
        throw new Error(`knotd log never matched ${re}${exited ? " (exited)" : ""}:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await status;
    await reading.catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const deadline = Date.now() + 60_000;
    for (const z of zones) {
      for (;;) {
        if (exited) throw new Error(`knotd exited:\n${log}`);
        if (Date.now() > deadline) throw new Error(`knotd does not serve ${z.domain}:\n${log}`);
        const r = await udpQuery("127.0.0.1", port, soaQuery(z.domain), 200);
        if (r && (r[3] & 0xf) === 0 && r[7] > 0) break;
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { address: "127.0.0.1", port, log: () => log, waitLog, stop };
}
