/**
 * Edge hardening of every HTTP connection manager and listener at the edge, after Envoy's
 * "Configuring Envoy as an edge proxy" best practices and Envoy Gateway's defaults: header names
 * with underscores rejected, a deadline for the request header block, a stream idle timeout,
 * HTTP/2 concurrent-stream and flow-control window limits, and a per-connection buffer limit.
 * (The global downstream connection limit lives in the bootstrap's overload manager.)
 * @module
 */
import { HeadersWithUnderscores } from "./enums.ts";
import { duration } from "./util.ts";

/** What the edge does with a request header whose name contains `_`. */
export type UnderscoreHeaderAction = "reject" | "drop" | "allow";

/** Limits applied to edge listeners (every field has a default in {@link edgeLimitDefaults}). */
export interface EdgeLimits {
  /** `reject` answers 400, `drop` removes the header, `allow` forwards it. */
  headersWithUnderscores: UnderscoreHeaderAction;
  /** The whole request header block must arrive within this (ms; 0 = no limit). */
  requestHeadersTimeoutMs: number;
  /** A stream with no activity for this long is reset (ms; 0 = no limit). */
  streamIdleTimeoutMs: number;
  /** HTTP/2: concurrent streams per connection. */
  http2MaxConcurrentStreams: number;
  /** HTTP/2: initial stream flow-control window (bytes, 65535 … 2^31-1). */
  http2InitialStreamWindowBytes: number;
  /** HTTP/2: initial connection flow-control window (bytes, 65535 … 2^31-1). */
  http2InitialConnectionWindowBytes: number;
  /** Read/write buffer limit per downstream connection (bytes). */
  connectionBufferLimitBytes: number;
}

/**
 * Defaults: Envoy Gateway's (REJECT_REQUEST, 100 streams, 64 KiB / 1 MiB windows, 32 KiB
 * buffers), a 10 s request header deadline and Envoy's 5 min stream idle timeout made explicit.
 */
export const edgeLimitDefaults: Readonly<EdgeLimits> = {
  headersWithUnderscores: "reject",
  requestHeadersTimeoutMs: 10_000,
  streamIdleTimeoutMs: 300_000,
  http2MaxConcurrentStreams: 100,
  http2InitialStreamWindowBytes: 65_536,
  http2InitialConnectionWindowBytes: 1_048_576,
  connectionBufferLimitBytes: 32_768,
};

const underscoreAction = {
  reject: HeadersWithUnderscores.REJECT_REQUEST,
  drop: HeadersWithUnderscores.DROP_HEADER,
  allow: HeadersWithUnderscores.ALLOW,
} as const;

/** The HttpConnectionManager fields the edge adds (protobufjs fromObject form). */
export function edgeHcmFields(limits: EdgeLimits): Record<string, unknown> {
  const out: Record<string, unknown> = {
    common_http_protocol_options: {
      headers_with_underscores_action: underscoreAction[limits.headersWithUnderscores],
    },
    http2_protocol_options: {
      max_concurrent_streams: { value: limits.http2MaxConcurrentStreams },
      initial_stream_window_size: { value: limits.http2InitialStreamWindowBytes },
      initial_connection_window_size: { value: limits.http2InitialConnectionWindowBytes },
    },
    stream_idle_timeout: duration(limits.streamIdleTimeoutMs),
  };
  if (limits.requestHeadersTimeoutMs > 0) {
    out.request_headers_timeout = duration(limits.requestHeadersTimeoutMs);
  }
  return out;
}

/** Checks ranges; returns a message per bad field (empty when all are fine). */
export function checkEdgeLimits(l: EdgeLimits): string[] {
  const bad: string[] = [];
  const int = (name: string, v: number, min: number, max: number) => {
    if (!Number.isInteger(v) || v < min || v > max) {
      bad.push(`${name} must be ${min}…${max}, got ${v}`);
    }
  };
  if (!(l.headersWithUnderscores in underscoreAction)) {
    bad.push(
      `headers with underscores must be reject, drop or allow, got ${l.headersWithUnderscores}`,
    );
  }
  int("request headers timeout (ms)", l.requestHeadersTimeoutMs, 0, 2 ** 31);
  int("stream idle timeout (ms)", l.streamIdleTimeoutMs, 0, 2 ** 31);
  int("HTTP/2 max concurrent streams", l.http2MaxConcurrentStreams, 1, 2 ** 31 - 1);
  int("HTTP/2 initial stream window", l.http2InitialStreamWindowBytes, 65535, 2 ** 31 - 1);
  int("HTTP/2 initial connection window", l.http2InitialConnectionWindowBytes, 65535, 2 ** 31 - 1);
  int("connection buffer limit", l.connectionBufferLimitBytes, 1024, 2 ** 31 - 1);
  return bad;
}
