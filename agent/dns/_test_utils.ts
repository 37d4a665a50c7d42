/**
 * Test and benchmark helpers for the DNS responder: real peers (dig, unbound) on loopback, free
 * ports, a raw UDP/TCP client and a dig output parser. Not part of the agent.
 * @module
 */
import dgram from "node:dgram";
import type { Buffer } from "node:buffer";
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { DnsResponder, type DnsResponderOptions } from "./mod.ts";
import { put16, u16 } from "./wire.ts";

/** A free port on `host` for both UDP and TCP (checked by binding both). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const s = dgram.createSocket("udp4");
    const port = await new Promise<number>((res, rej) => {
      s.once("error", rej);
      s.bind(0, host, () => res(s.address().port));
    });
    try {
      const l = Deno.listen({ hostname: host, port });
      l.close();
      return port;
    } catch {
      // TCP side taken; try another
    } finally {
      s.close();
    }
  }
  throw new Error("no free port");
}

/** A running peer process. */
export interface Peer {
  address: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Sends one UDP query and waits for the first reply (undefined after `timeoutMs`, or as soon as
 * `givenUp` says the server dropped it).
 */
export function udpQuery(
  host: string,
  port: number,
  msg: Uint8Array,
  timeoutMs = 1000,
  givenUp?: () => boolean,
): Promise<Uint8Array | undefined> {
  const s = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(undefined), timeoutMs);
    // The server says it dropped the query: no answer will come, so stop waiting now.
    const poll = givenUp && setInterval(() => givenUp() && done(undefined), 10);
    const done = (r: Uint8Array | undefined) => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      s.close();
      resolve(r);
    };
    s.on("message", (m: Buffer) => done(new Uint8Array(m)));
    s.on("error", () => done(undefined));
    s.send(msg, port, host);
  });
}

/** Sends length-prefixed messages on one TCP connection; collects `expect` replies. */
export async function tcpQueries(
  host: string,
  port: number,
  msgs: Uint8Array[],
  expect = msgs.length,
  timeoutMs = 3000,
): Promise<Uint8Array[]> {
  const conn = await Deno.connect({ hostname: host, port });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  const framed = msgs.map((m) => {
    const f = new Uint8Array(m.length + 2);
    put16(f, 0, m.length);
    f.set(m, 2);
    return f;
  });
  const all = new Uint8Array(framed.reduce((n, f) => n + f.length, 0));
  let o = 0;
  for (const f of framed) {
    all.set(f, o);
    o += f.length;
  }
  const out: Uint8Array[] = [];
  try {
    await conn.write(all);
    let buf = new Uint8Array(0);
    const chunk = new Uint8Array(65538);
    while (out.length < expect) {
      const n = await conn.read(chunk);
      if (n === null) break;
      const next = new Uint8Array(buf.length + n);
      next.set(buf);
      next.set(chunk.subarray(0, n), buf.length);
      buf = next;
      while (buf.length >= 2 && buf.length >= 2 + u16(buf, 0)) {
        out.push(buf.slice(2, 2 + u16(buf, 0)));
        buf = buf.slice(2 + u16(buf, 0));
      }
    }
  } catch {
    /* closed by the timer */
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* already closed */ }
  }
  return out;
}

/**
 * An unbound.conf for a test: one foreground, unprivileged thread on `address:port` answering
 * 127.0.0.0/8, working in `dir`, with extra `server:` lines and optional extra sections.
 */
export function unboundConfig(
  opts: { address: string; port: number; dir: string; server?: string[]; extra?: string[] },
): string {
  return [
    "server:",
    `  interface: ${opts.address}@${opts.port}`,
    `  port: ${opts.port}`,
    "  do-daemonize: no",
    '  username: ""',
    '  chroot: ""',
    `  directory: "${opts.dir}"`,
    '  pidfile: ""',
    "  use-syslog: no",
    "  verbosity: 0",
    "  num-threads: 1",
    '  module-config: "iterator"',
    "  access-control: 127.0.0.0/8 allow",
    "  do-not-query-localhost: no",
    ...(opts.server ?? []).map((l) => "  " + l),
    ...(opts.extra ?? []),
  ].join("\n") + "\n";
}

/**
 * Starts unbound on `address:port` with extra `server:` lines and optional extra sections. Ready
 * means it answered a query (a condition, not a time: a loaded machine may take many seconds); an
 * unbound that exits first fails with its own stderr, and one that lost its port to another
 * process (a free port taken before it bound) is started again on another, when none was asked.
 */
export async function startUnbound(
  opts: { address?: string; port?: number; server?: string[]; extra?: string[]; cpu?: number },
): Promise<Peer> {
  const bin = await ensurePeer("unbound");
  const address = opts.address ?? "127.0.0.1";
  for (let attempt = 1;; attempt++) {
    const port = opts.port ?? await freePort(address);
    const started = await tryUnbound(bin, address, port, opts);
    if ("peer" in started) return started.peer;
    const lostPort = /could not open ports|address already in use/i.test(started.stderr);
    if (!lostPort || opts.port !== undefined || attempt >= 3) {
      throw new Error(`unbound did not start on ${address}:${port}: ${started.stderr}`);
    }
  }
}

/** How long unbound may take to answer its first query before it is given up on. */
const UNBOUND_READY_MS = 60_000;

async function tryUnbound(
  bin: string,
  address: string,
  port: number,
  opts: { server?: string[]; extra?: string[]; cpu?: number },
): Promise<{ peer: Peer } | { stderr: string }> {
  const dir = await Deno.makeTempDir({ prefix: "aether-unbound-" });
  const conf = unboundConfig({ address, port, dir, server: opts.server, extra: opts.extra });
  const path = join(dir, "unbound.conf");
  await Deno.writeTextFile(path, conf);
  const cmd = opts.cpu === undefined ? bin : "taskset";
  const args = opts.cpu === undefined
    ? ["-d", "-c", path]
    : ["-c", String(opts.cpu), bin, "-d", "-c", path];
  const child = new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).spawn();
  const output = child.output();
  let exited = false;
  output.then(() => exited = true, () => exited = true);
  // "localhost. A" is answered by unbound's built-in local zone, no recursion needed.
  const probe = new Uint8Array([
    ...[0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 9],
    ...new TextEncoder().encode("localhost"),
    ...[0, 0, 1, 0, 1],
  ]);
  const deadline = Date.now() + UNBOUND_READY_MS;
  while (!exited && Date.now() < deadline) {
    if (await udpQuery(address, port, probe, 200)) {
      return {
        peer: {
          address,
          port,
          dir,
          stop: async () => {
            try {
              child.kill("SIGTERM");
            } catch { /* exited */ }
            await output.catch(() => {});
            await Deno.remove(dir, { recursive: true }).catch(() => {});
          },
        },
      };
    }
  }
  const timedOut = !exited;
  try {
    child.kill("SIGKILL");
  } catch { /* exited by itself */ }
  const out = await output;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const stderr = new TextDecoder().decode(out.stderr).trim();
  return { stderr: timedOut ? `no answer after ${UNBOUND_READY_MS} ms; ${stderr}` : stderr };
}

/** Runs dig with `args`; returns stdout. */
export async function dig(args: string[]): Promise<string> {
  const bin = await ensurePeer("dig");
  const out = await new Deno.Command(bin, { args, stdout: "piped", stderr: "piped" }).output();
  return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
}

/**
 * The answers in dig's `+short` output: one record's data per line. dig also prints its own
 * remarks there, each starting with `;;` — a retry after a lost datagram prints
 * `;; communications error to …: timed out` before the retry's answer — so those are not answers.
 */
export function shortAnswers(out: string): string[] {
  return out.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith(";"));
}

/** The parts of dig's output the tests look at. */
export interface DigResult {
  status: string;
  flags: string[];
  answer: string[];
  authority: string[];
  opt: string | undefined;
  truncatedRetry: boolean;
  transport: string | undefined;
  raw: string;
}

/** Parses dig's default output (the last answer shown). */
export function parseDig(out: string): DigResult {
  const status = [...out.matchAll(/status: (\w+)/g)].pop()?.[1] ?? "";
  const flags = ([...out.matchAll(/;; flags: ([a-z ]+);/g)].pop()?.[1] ?? "").trim().split(/\s+/);
  const section = (name: string) => {
    const i = out.lastIndexOf(`;; ${name} SECTION:`);
    if (i < 0) return [];
    const lines = out.slice(i).split("\n").slice(1);
    const end = lines.findIndex((l) => l.trim() === "");
    return lines.slice(0, end < 0 ? undefined : end).filter((l) => !l.startsWith(";"));
  };
  return {
    status,
    flags,
    answer: section("ANSWER"),
    authority: section("AUTHORITY"),
    opt: [...out.matchAll(/; EDNS: ([^\n]+)/g)].pop()?.[1],
    truncatedRetry: out.includes("Truncated, retrying in TCP mode"),
    transport: [...out.matchAll(/;; SERVER: \S+ \((\w+)\)/g)].pop()?.[1],
    raw: out,
  };
}

/** Starts an in-process responder on 127.0.0.1 (free port) with a quiet logger. */
export async function startResponder(
  opts: Partial<DnsResponderOptions> & { meshDomain?: string },
): Promise<{ responder: DnsResponder; port: number; registry: Registry; logs: string[] }> {
  const logs: string[] = [];
  const registry = new Registry();
  const responder = new DnsResponder({
    meshDomain: "mesh.internal",
    upstreams: [],
    metrics: registry,
    logger: new Logger("dns", (l) => logs.push(l), "debug"),
    ...opts,
  });
  const { port } = await responder.listen({ address: "127.0.0.1", port: 0 });
  return { responder, port, registry, logs };
}
