/**
 * Envoy's API protos, loaded with protobufjs from the `deps/` folder of npm `@grpc/grpc-js-xds`
 * (never hand-copied), plus the few fields newer than that snapshot, added in `newerFields`. The
 * agent loads them from `envoy_api.gen.json`, protobufjs's JSON form of the same root written by
 * `deno task gen-envoy-api` (tools/gen_envoy_api.ts): reading it costs about half the CPU of
 * parsing the `.proto` files at every start. proto_descriptor_test.ts fails while it is stale.
 * @module
 */
import protobuf from "protobufjs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import envoyApi from "./envoy_api.gen.json" with { type: "json" };
import { IdentityMemo } from "../../lib/memo/mod.ts";
import type { DirectEncoder } from "./direct_encode.ts";
import { rootIndex } from "./root_index.ts";

const require = createRequire(import.meta.url);

/** Proto files loaded into the root; every type they import comes along. */
const entryFiles = [
  "envoy/service/discovery/v3/ads.proto",
  "envoy/service/discovery/v3/discovery.proto",
  "envoy/config/bootstrap/v3/bootstrap.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/filters/udp/udp_proxy/v3/udp_proxy.proto",
  "envoy/extensions/filters/udp/udp_proxy/v3/route.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/http/on_demand/v3/on_demand.proto",
  "envoy/extensions/filters/http/lua/v3/lua.proto",
  "envoy/extensions/common/matching/v3/extension_matcher.proto",
  "envoy/extensions/filters/common/matcher/action/v3/skip_action.proto",
  "envoy/type/matcher/v3/http_inputs.proto",
  "envoy/extensions/filters/http/header_mutation/v3/header_mutation.proto",
  "envoy/extensions/filters/http/upstream_codec/v3/upstream_codec.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/filters/listener/original_dst/v3/original_dst.proto",
  "envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto",
  "envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.proto",
  "envoy/extensions/matching/common_inputs/network/v3/network_inputs.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  "envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto",
  "envoy/extensions/bootstrap/internal_listener/v3/internal_listener.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/service/secret/v3/sds.proto",
  "envoy/admin/v3/config_dump.proto",
  "google/rpc/status.proto",
];

/**
 * Fields Envoy 1.40 has that the @grpc/grpc-js-xds 1.14.1 snapshot lacks. Each names the Envoy
 * release that added it; field numbers are from Envoy's API docs.
 */
export const newerFields: {
  type: string;
  name: string;
  id: number;
  fieldType: string;
  since: string;
}[] = [
  // envoy.config.core.v3.SocketAddress.network_namespace_filepath: Envoy 1.35.
  {
    type: "envoy.config.core.v3.SocketAddress",
    name: "network_namespace_filepath",
    id: 7,
    fieldType: "string",
    since: "1.35",
  },
];

function includeDirs(): string[] {
  const deps = join(dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
  const protobufjsDir = dirname(require.resolve("protobufjs/package.json"));
  return [
    join(deps, "envoy-api"),
    join(deps, "xds"),
    join(deps, "googleapis"),
    join(deps, "protoc-gen-validate"),
    protobufjsDir,
  ];
}

let cached: protobuf.Root | undefined;

/**
 * The protobufjs Root, from the generated JSON descriptor (loaded once). Its types resolve their
 * fields on first use (protobufjs does that in `setup`, {@link resolvedFields} for the chunked
 * encoder): resolving all of Envoy's API up front cost ≈ 40 % of loading it, for the few hundred
 * types an agent ever encodes. proto_descriptor_test.ts resolves every type of it.
 */
export function envoyRoot(): protobuf.Root {
  if (cached) return cached;
  // Root.fromJSON would resolveAll(); addJSON does not. Edition features (packed encoding, field
  // presence) are what resolveAll sets besides type references, and the encoders read them, so
  // they are resolved here, through protobufjs's own (untyped) step of resolveAll.
  const root = new protobuf.Root().addJSON((envoyApi as protobuf.INamespace).nested!) as
    & protobuf.Root
    & { _resolveFeaturesRecursive(edition: string): void; _edition: string };
  addNewerFields(root);
  root._resolveFeaturesRecursive(root._edition);
  cached = root;
  return root;
}

function addNewerFields(root: protobuf.Root): void {
  for (const f of newerFields) {
    const type = root.lookupType(f.type);
    if (!type.fields[f.name]) type.add(new protobuf.Field(f.name, f.id, f.fieldType));
  }
}

/**
 * Parses the `.proto` files into a new resolved Root (what `envoy_api.gen.json` is made from;
 * ~2× the CPU of {@link envoyRoot}'s JSON path).
 */
export function loadEnvoyProtos(): protobuf.Root {
  const dirs = includeDirs();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of dirs) {
      const candidate = join(dir, target);
      try {
        Deno.statSync(candidate);
        return candidate;
      } catch { /* try the next include dir */ }
    }
    return target;
  };
  root.loadSync(entryFiles, { keepCase: true });
  addNewerFields(root);
  root.resolveAll();
  return root;
}

/** Looks up a message type by its full name (without a leading dot). */
export function messageType(fullName: string): protobuf.Type {
  const root = envoyRoot();
  const types = rootIndex(root).types;
  let type = types.get(fullName);
  // Root.lookupType walks the namespace tree on every call (≈ 10 % of a cold encode).
  if (!type) types.set(fullName, type = root.lookupType(fullName));
  return type;
}

/** Type URL prefix used in Any and in xDS type_url fields. */
export const typeUrlPrefix = "type.googleapis.com/";

/** xDS resource type URLs. */
export const TypeUrl = {
  listener: "type.googleapis.com/envoy.config.listener.v3.Listener",
  route: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
  /** SRDS: a listener's route scopes, each naming the RouteConfiguration of one key (a host). */
  scopedRoute: "type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration",
  /** VHDS: virtual hosts of a RouteConfiguration whose `vhds` is set (delta xDS only). */
  virtualHost: "type.googleapis.com/envoy.config.route.v3.VirtualHost",
  cluster: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  endpoint: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  secret: "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
} as const;

/**
 * Encodes a resource given as a plain object (protobufjs `fromObject` form, snake_case field
 * names, nested Any as `{"@type": url, ...fields}`) into protobuf bytes. Throws naming the type
 * when the object does not fit the schema. With `direct` (the caller's, e.g. a snapshot's
 * Encodings'), parts are written by it (direct_encode.ts: the same bytes, less work and garbage).
 */
export function encodeResource(
  typeUrl: string,
  resource: Record<string, unknown>,
  elements: ElementEncodings = new IdentityMemo(),
  direct?: DirectEncoder,
): Uint8Array {
  const type = messageType(typeUrl.slice(typeUrlPrefix.length));
  try {
    return encodeInChunks(type, resource, elements, direct);
  } catch (e) {
    if (e instanceof DoesNotFit) throw new Error(`${type.fullName}: ${e.message}`);
    throw e;
  }
}

/** protobufjs `verify`'s complaint, with the field path relative to the encoded message. */
class DoesNotFit extends Error {}

/**
 * Encodings of long-list elements (a virtual host, a route) by element object, owned by the
 * caller (a snapshot's Encodings): a caller that passes an unchanged element object again inside
 * a new message (agent/xds/cache/reuse.ts makes equal elements the same object) gets its bytes
 * without converting, verifying or encoding it. Its misses count the elements encoded (or found
 * not to fit).
 */
export type ElementEncodings = IdentityMemo<object, { type: protobuf.Type; bytes: Uint8Array }>;

/** Lists longer than this are encoded one element at a time. */
const CHUNK_AT = 8;

/**
 * `type.encode(type.fromObject(object))`, byte for byte, but with long repeated message fields
 * (a RouteConfiguration's virtual hosts, a virtual host's routes) converted and encoded one
 * element at a time: protobufjs keeps one small object per written value until `finish`, so a
 * multi-megabyte message in one piece is mostly garbage-collector work. Elements are spliced in
 * where protobufjs puts them (fields in field-number order, each element as tag, length, bytes).
 * Each part is verified before fromObject, which silently drops what does not fit (verify wants
 * enum numbers, so the translator emits numbers; see translate/enums.ts); a misfit throws
 * DoesNotFit with the field path verify gives for the whole message. With `direct`, a part is
 * written by it (the same bytes, without verify's walk, fromObject's objects and the Writer's)
 * unless it holds what only protobufjs encodes exactly or verify would refuse: then as above.
 */
function encodeInChunks(
  type: protobuf.Type,
  object: Record<string, unknown>,
  elements: ElementEncodings,
  direct: DirectEncoder | undefined,
): Uint8Array {
  const long = resolvedFields(type).filter((f) =>
    f.repeated && f.resolvedType instanceof protobuf.Type &&
    Array.isArray(object[f.name]) && (object[f.name] as unknown[]).length > CHUNK_AT
  );
  const rest = long.length === 0 ? object : { ...object };
  for (const f of long) delete rest[f.name];
  let head = direct?.encode(type, rest);
  if (head === undefined) {
    const err = type.verify(rest);
    if (err) throw new DoesNotFit(err);
    // The plain Writer, not the Buffer one protobufjs picks where `Buffer` exists: that one asks
    // the runtime for every string's UTF-8 length (a call into Deno per string written).
    head = type.encode(type.fromObject(rest), new protobuf.Writer()).finish();
  }
  if (long.length === 0) return head;
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const f of long.sort((a, b) => a.id - b.id)) {
    const end = offsetOfFieldAfter(head, at, f.id);
    parts.push(head.subarray(at, end));
    at = end;
    const element = f.resolvedType as protobuf.Type;
    for (const item of object[f.name] as Record<string, unknown>[]) {
      if (typeof item !== "object" || item === null) {
        throw new TypeError(`${type.fullName}.${f.name}: object expected`);
      }
      const bytes = encodeElement(element, item, f.name, elements, direct);
      parts.push(
        new protobuf.Writer().uint32(((f.id << 3) | 2) >>> 0).uint32(bytes.length).finish(),
      );
      parts.push(bytes);
    }
  }
  parts.push(head.subarray(at));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** The fields of `type`, each with its type reference resolved (idempotent, cheap once done). */
function resolvedFields(type: protobuf.Type): protobuf.Field[] {
  const fields = type.fieldsArray;
  for (const f of fields) if (!f.resolved) f.resolve();
  return fields;
}

/** One element of a long list, from `elements` when this very object was seen before. */
function encodeElement(
  type: protobuf.Type,
  item: Record<string, unknown>,
  field: string,
  elements: ElementEncodings,
  direct: DirectEncoder | undefined,
) {
  const known = elements.peek(item);
  elements.count(known?.type === type);
  if (known?.type === type) return known.bytes;
  let bytes: Uint8Array;
  try {
    bytes = encodeInChunks(type, item, elements, direct);
  } catch (e) {
    if (e instanceof DoesNotFit) throw new DoesNotFit(`${field}.${e.message}`);
    throw e;
  }
  elements.set(item, { type, bytes });
  return bytes;
}

/** The offset of the first top-level field at or after `from` whose number is above `id`. */
function offsetOfFieldAfter(bytes: Uint8Array, from: number, id: number): number {
  const reader = protobuf.Reader.create(bytes);
  reader.pos = from;
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    if (tag >>> 3 > id) return start;
    reader.skipType(tag & 7);
  }
  return reader.len;
}
