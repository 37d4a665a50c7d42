/**
 * The SPIRE server Entry API's messages, loaded with protobufjs from aether's own `.proto` text
 * (`proto/spire/entry.proto` and `types.proto`), unary method descriptors for `@grpc/grpc-js`'s
 * generic client, and conversions between the wire entry and {@link EntrySpec}.
 * @module
 */
import protobuf from "protobufjs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type GrpcMethod, grpcMethod, loadProtoRoot } from "../../lib/grpc/method.ts";
import type { ActualEntry, EntrySpec } from "./entries.ts";

const protoDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "proto");

/** The Entry API's proto file (it imports `spire/types.proto` from the same proto root). */
export const entryProtoFile = join(protoDir, "spire", "entry.proto");

/** The Entry service's full name. */
export const ENTRY_SERVICE = "spire.api.server.entry.v1.Entry";

/** A loaded root with the Entry API (imports resolved against `proto/`). */
export function entryRoot(): protobuf.Root {
  return loadProtoRoot(protoDir, entryProtoFile);
}

/** A unary method: its gRPC path and message codecs. */
export type UnaryMethod<Req, Res> = GrpcMethod<Req, Res>;

/** The descriptor of `method` of the Entry service in `root`. */
export function unaryMethod<Req, Res>(root: protobuf.Root, method: string): UnaryMethod<Req, Res> {
  return grpcMethod(root, ENTRY_SERVICE, method);
}

/** spire.api.types.SPIFFEID as decoded. */
export interface WireSpiffeId {
  trust_domain: string;
  path: string;
}

/** spire.api.types.Entry: the fields aether writes and reads. */
export interface WireEntry {
  id?: string;
  spiffe_id: WireSpiffeId | null;
  parent_id: WireSpiffeId | null;
  selectors: { type: string; value: string }[];
  x509_svid_ttl: number;
  admin: boolean;
  downstream: boolean;
  hint: string;
}

/** spire.api.types.Status. */
export interface WireStatus {
  code: number;
  message: string;
}

/** ListEntriesRequest. */
export interface ListEntriesRequest {
  filter?: { by_hint?: { value: string } };
  page_size: number;
  page_token: string;
}

/** ListEntriesResponse. */
export interface ListEntriesResponse {
  entries: WireEntry[];
  next_page_token: string;
}

/** CountEntriesRequest / Response. */
export interface CountEntriesRequest {
  filter?: { by_hint?: { value: string } };
}
export interface CountEntriesResponse {
  count: number;
}

/** BatchCreateEntryRequest / BatchUpdateEntryRequest (with input_mask). */
export interface BatchEntriesRequest {
  entries: WireEntry[];
  input_mask?: Record<string, boolean>;
  /** Returned fields; aether asks for none but the id (an all-false mask). */
  output_mask?: Record<string, boolean>;
}

/** BatchCreateEntryResponse / BatchUpdateEntryResponse. */
export interface BatchEntriesResponse {
  results: { status: WireStatus | null; entry: WireEntry | null }[];
}

/** BatchDeleteEntryRequest / Response. */
export interface BatchDeleteRequest {
  ids: string[];
}
export interface BatchDeleteResponse {
  results: { status: WireStatus | null; id: string }[];
}

/** `spiffe://td/path` → wire form; throws on anything else. */
export function wireId(id: string): WireSpiffeId {
  const m = /^spiffe:\/\/([^/]+)(\/.*)$/.exec(id);
  if (!m) throw new Error(`not a SPIFFE ID with a path: ${id}`);
  return { trust_domain: m[1], path: m[2] };
}

function idString(w: WireSpiffeId | null): string {
  return w ? `spiffe://${w.trust_domain}${w.path}` : "";
}

/** An entry to send (no id: the server assigns it). */
export function toWire(e: EntrySpec): WireEntry {
  return {
    spiffe_id: wireId(e.spiffeId),
    parent_id: wireId(e.parentId),
    selectors: e.selectors.map((s) => {
      const i = s.indexOf(":");
      if (i <= 0) throw new Error(`selector ${s}: want type:value`);
      return { type: s.slice(0, i), value: s.slice(i + 1) };
    }),
    x509_svid_ttl: e.x509SvidTtl,
    admin: e.admin,
    downstream: e.downstream,
    hint: e.hint,
  };
}

/** A listed entry, selectors sorted. */
export function fromWire(w: WireEntry): ActualEntry {
  return {
    id: w.id ?? "",
    spiffeId: idString(w.spiffe_id),
    parentId: idString(w.parent_id),
    selectors: w.selectors.map((s) => `${s.type}:${s.value}`).sort(),
    x509SvidTtl: w.x509_svid_ttl,
    admin: w.admin,
    downstream: w.downstream,
    hint: w.hint,
  };
}
