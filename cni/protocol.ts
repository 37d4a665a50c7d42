/**
 * The wire between the exec'd plugin (the static forwarder cni/forwarder.c, or cni/main.ts) and
 * the node agent, over a unix socket: one request and one reply per connection, length-prefixed
 * binary so the C side needs no JSON encoder.
 *
 *   request: "ACN1" | u32 env bytes | env ("KEY=VALUE\0" …, the CNI_* variables)
 *                   | u32 stdin bytes | stdin (the network configuration, as given)
 *   reply:   "ACN1" | u32 exit code | u32 stdout bytes | stdout | u32 stderr bytes | stderr
 *
 * Integers are big-endian. Each part has a bound ({@link LIMITS}); a frame over it is refused
 * before it is read whole. Encoding and decoding are pure; {@link readFrame} reads one frame from
 * a connection.
 * @module
 */
import { decodeStdin, MAX_CONF_BYTES } from "./conf.ts";
import type { Reply } from "./spec.ts";

/** The frame's first four bytes. */
export const MAGIC = "ACN1";

/** The largest part of each kind a frame may carry. */
export const LIMITS = {
  env: 64 << 10,
  stdin: MAX_CONF_BYTES,
  stdout: 4 << 20,
  stderr: 64 << 10,
} as const;

/** A forwarded invocation: the plugin's CNI_* environment and its stdin. */
export interface ForwardedRequest {
  env: Record<string, string>;
  stdin: string;
}

/** What a plugin binary forwards: stdin as it read it (bytes), or as text. */
export interface ForwardedBytes {
  env: Record<string, string>;
  stdin: string | Uint8Array;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

/** The request frame (pure). */
export function encodeRequest(r: ForwardedBytes): Uint8Array {
  const env = enc.encode(Object.entries(r.env).map(([k, v]) => `${k}=${v}\0`).join(""));
  const stdin = typeof r.stdin === "string" ? enc.encode(r.stdin) : r.stdin;
  return concat([enc.encode(MAGIC), u32(env.length), env, u32(stdin.length), stdin]);
}

/** The reply frame (pure). */
export function encodeReply(r: Reply): Uint8Array {
  const out = enc.encode(r.stdout), err = enc.encode(r.stderr);
  return concat([
    enc.encode(MAGIC),
    u32(r.exitCode),
    u32(out.length),
    out,
    u32(err.length),
    err,
  ]);
}

/** Parses the env part: `KEY=VALUE` entries, each NUL-terminated (pure). */
function parseEnv(bytes: Uint8Array): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of dec.decode(bytes).split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** Something that yields bytes (a `Deno.Conn`). */
export interface ByteReader {
  read(p: Uint8Array): Promise<number | null>;
}

/** A frame that is malformed or over its bounds. */
export class FrameError extends Error {}

/** Reads one frame's fields: the magic, then each `[label, limit]` length-prefixed part. */
async function readParts(
  conn: ByteReader,
  layout: readonly (readonly [string, number])[],
  prefix: number,
): Promise<{ head: number[]; parts: Uint8Array[] }> {
  let buf: Uint8Array = new Uint8Array(0);
  const need = async (n: number) => {
    while (buf.length < n) {
      const chunk = new Uint8Array(Math.max(4096, n - buf.length));
      const got = await conn.read(chunk);
      if (got === null) throw new FrameError(`the frame ended after ${buf.length} bytes`);
      buf = concat([buf, chunk.subarray(0, got)]);
    }
  };
  const take = async (n: number) => {
    await need(n);
    const out = buf.slice(0, n);
    buf = buf.slice(n);
    return out;
  };
  const magic = dec.decode(await take(4));
  if (magic !== MAGIC) {
    throw new FrameError(`not an aether CNI frame (starts ${JSON.stringify(magic)})`);
  }
  const head: number[] = [];
  for (let i = 0; i < prefix; i++) head.push(new DataView((await take(4)).buffer).getUint32(0));
  const parts: Uint8Array[] = [];
  for (const [label, limit] of layout) {
    const n = new DataView((await take(4)).buffer).getUint32(0);
    if (n > limit) throw new FrameError(`the ${label} is ${n} bytes, over the ${limit} allowed`);
    parts.push(await take(n));
  }
  return { head, parts };
}

/** Reads one request frame from `conn`; throws {@link FrameError} on a bad one. */
export async function readRequest(conn: ByteReader): Promise<ForwardedRequest> {
  const { parts } = await readParts(conn, [["environment", LIMITS.env], [
    "configuration",
    LIMITS.stdin,
  ]], 0);
  return { env: parseEnv(parts[0]), stdin: decodeStdin(parts[1]) };
}

/** Reads one reply frame from `conn`; throws {@link FrameError} on a bad one. */
export async function readReply(conn: ByteReader): Promise<Reply> {
  const { head, parts } = await readParts(
    conn,
    [["stdout", LIMITS.stdout], ["stderr", LIMITS.stderr]],
    1,
  );
  return { exitCode: head[0], stdout: dec.decode(parts[0]), stderr: dec.decode(parts[1]) };
}
