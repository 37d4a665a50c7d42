/**
 * A plain object (protobufjs `fromObject` form) straight to protobuf bytes, byte for byte what
 * `type.encode(type.fromObject(object)).finish()` gives — without `verify`'s walk, the
 * conversion's message objects and the Writer's one small object per value written (two thirds
 * of what encoding a cold snapshot allocated). One pass into one growing buffer: a
 * nested message gets one length byte up front, and its bytes move up when it turns out longer
 * than 127. Fields are written in field-number order, as protobufjs writes them.
 *
 * Only what it encodes exactly as protobufjs does is taken: a value `fromObject` would change
 * (an Any in its `{"@type": …}` form, a 32-bit integer out of range, a 64-bit one that is not a
 * safe integer, bytes as base64 text, a NaN), a map, a group, an object that is not a plain one
 * (a field could be inherited) — then {@link DirectEncoder.encode} answers undefined and the caller
 * verifies, converts and encodes with protobufjs as before. It answers bytes only for objects
 * `verify` accepts: every value it writes is checked as verify checks it (its type, an enum's
 * number among the enum's values, one field of a oneof), and a type with a proto2 required field
 * is left to protobufjs; anything verify would refuse is left to it too, so its error is the one
 * reported.
 * @module
 */
import protobuf from "protobufjs";
import { WireOut as Out } from "./wire_out.ts";
import { rootIndex } from "./root_index.ts";

/** How a field's values are written (wire type and conversion). */
const enum Kind {
  String,
  Bool,
  Int32,
  /** An enum's number: one of its values. */
  Enum,
  Uint32,
  Sint32,
  Int64,
  Uint64,
  Fixed32,
  Sfixed32,
  Double,
  Float,
  Bytes,
  Message,
  /** Left to protobufjs: the object is encoded the old way. */
  Other,
}

interface FieldInfo {
  readonly id: number;
  readonly kind: Kind;
  readonly repeated: boolean;
  readonly packed: boolean;
  /** The nested message type (kind Message). */
  readonly type?: protobuf.Type;
  /** The numbers of the enum (kind Enum). */
  readonly values?: ReadonlySet<number>;
  /** The oneof a singular field is part of: verify takes one value of each. */
  readonly oneof?: protobuf.OneOf;
}

/**
 * Per message type, its fields by name (derived once from the immutable, resolved Root), and
 * whether it has a proto2 required field (verify wants it set: such types are left to protobufjs).
 */
interface Table {
  readonly fields: ReadonlyMap<string, FieldInfo>;
  readonly required: boolean;
}

/** The largest output buffer kept between calls (bytes). */
const KEEP_BUFFER = 1 << 20;

/** Deeper than this is left to protobufjs (which limits nesting itself). */
const MAX_DEPTH = 32;

const scalarKinds: Readonly<Record<string, Kind>> = {
  string: Kind.String,
  bool: Kind.Bool,
  int32: Kind.Int32,
  uint32: Kind.Uint32,
  sint32: Kind.Sint32,
  int64: Kind.Int64,
  uint64: Kind.Uint64,
  fixed32: Kind.Fixed32,
  sfixed32: Kind.Sfixed32,
  double: Kind.Double,
  float: Kind.Float,
  bytes: Kind.Bytes,
};

/**
 * The field table of a message type, made on first use and kept by its Root's index (proto.ts),
 * shared by every encoder: a fresh snapshot stream's first small snapshot would otherwise pay more
 * for its tables than it saves.
 */
function tableOf(type: protobuf.Type): Table {
  return rootIndex(type.root).derive("direct-encode", type, makeTable);
}

/** The field table of `type` (see {@link tableOf}). */
function makeTable(type: protobuf.Type): Table {
  const byName = new Map<string, FieldInfo>();
  let required = false;
  for (const f of type.fieldsArray) {
    if (f.required) required = true;
    if (!f.resolved) f.resolve();
    const t = f.resolvedType;
    let kind: Kind;
    if (f.map || f.delimited) kind = Kind.Other;
    else if (t instanceof protobuf.Enum) kind = Kind.Enum;
    else if (t instanceof protobuf.Type) {
      kind = t.fullName === ".google.protobuf.Any" ? Kind.Other : Kind.Message;
    } else kind = scalarKinds[f.type] ?? Kind.Other;
    const packed = f.repeated && f.packed && kind !== Kind.Message && kind !== Kind.String &&
      kind !== Kind.Bytes;
    byName.set(f.name, {
      id: f.id,
      kind,
      repeated: f.repeated,
      packed,
      type: t instanceof protobuf.Type ? t : undefined,
      values: t instanceof protobuf.Enum ? new Set(Object.values(t.values)) : undefined,
      oneof: f.repeated ? undefined : f.partOf ?? undefined,
    });
  }
  return { fields: byName, required };
}

/** Whether `v` is a plain object: no prototype but Object's (no field inherited or a getter). */
function plain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** How an enum's number is written once checked. */
const INT32: FieldInfo = { id: 0, kind: Kind.Int32, repeated: false, packed: false };

/** Thrown inside the encoder when protobufjs should encode the object instead. */
class NotDirect {}
const NOT_DIRECT = new NotDirect();

/** Writes one scalar value of `kind` (no tag). */
function scalar(out: Out, f: FieldInfo, v: unknown): void {
  const kind = f.kind;
  switch (kind) {
    case Kind.Bool:
      if (typeof v !== "boolean") throw NOT_DIRECT;
      out.varint(v ? 1 : 0);
      return;
    case Kind.Enum: // a number among the enum's (verify's "enum value expected"), as an int32
      if (!f.values!.has(v as number)) throw NOT_DIRECT;
      return scalar(out, INT32, v);
    case Kind.Int32:
      if (typeof v !== "number" || (v | 0) !== v) throw NOT_DIRECT;
      if (v < 0) out.varint64(v >>> 0, 4294967295);
      else out.varint(v);
      return;
    case Kind.Uint32:
      if (typeof v !== "number" || (v >>> 0) !== v) throw NOT_DIRECT;
      out.varint(v);
      return;
    case Kind.Sint32:
      if (typeof v !== "number" || (v | 0) !== v) throw NOT_DIRECT;
      out.varint(((v << 1) ^ (v >> 31)) >>> 0);
      return;
    case Kind.Int64:
      if (!Number.isSafeInteger(v)) throw NOT_DIRECT;
      out.long(v as number);
      return;
    case Kind.Uint64:
      // Long.fromValue(negative, unsigned) is 0 in fromObject.
      if (!Number.isSafeInteger(v) || (v as number) < 0) throw NOT_DIRECT;
      out.long(v as number);
      return;
    case Kind.Fixed32:
      if (typeof v !== "number" || (v >>> 0) !== v) throw NOT_DIRECT;
      out.fixed32(v);
      return;
    case Kind.Sfixed32:
      if (typeof v !== "number" || (v | 0) !== v) throw NOT_DIRECT;
      out.fixed32(v);
      return;
    case Kind.Double:
    case Kind.Float:
      if (typeof v !== "number" || Number.isNaN(v)) throw NOT_DIRECT;
      out.float(v, kind === Kind.Float ? 4 : 8);
      return;
    default:
      throw NOT_DIRECT;
  }
}

/** The wire type of a non-packed value of `kind`. */
function wireType(kind: Kind): number {
  switch (kind) {
    case Kind.Double:
      return 1;
    case Kind.Fixed32:
    case Kind.Sfixed32:
    case Kind.Float:
      return 5;
    case Kind.String:
    case Kind.Bytes:
    case Kind.Message:
      return 2;
    default:
      return 0;
  }
}

/**
 * Encodes plain objects (see the module doc). Holds one output buffer and per-depth scratch
 * lists, reused across calls: owned by one stream of snapshots (its Encodings); a call never runs
 * inside another (encoding calls nothing outside this module).
 */
export class DirectEncoder {
  readonly #out = new Out();
  /**
   * The field tables this encoder has used, by type: a Map lookup per message instead of the
   * Root index's (which walks from the type up to its Root first).
   */
  readonly #tables = new Map<protobuf.Type, Table>();
  /** Per nesting depth, the fields set in the message being written and their values. */
  readonly #fields: FieldInfo[][] = [];
  readonly #values: unknown[][] = [];

  /**
   * `type.encode(type.fromObject(object)).finish()`'s bytes for an `object` verify accepts, or
   * undefined when the object holds what only protobufjs encodes exactly (see the module doc).
   */
  encode(type: protobuf.Type, object: Record<string, unknown>): Uint8Array | undefined {
    const out = this.#out;
    out.pos = 0;
    try {
      this.#message(type, object, 0);
    } catch (e) {
      if (e !== NOT_DIRECT) throw e;
      for (const list of this.#values) list.fill(undefined); // (nothing kept alive)
      return undefined;
    }
    const bytes = out.buf.slice(0, out.pos);
    // A buffer grown for one large message is not kept.
    if (out.buf.length > KEEP_BUFFER) out.buf = new Uint8Array(256);
    return bytes;
  }

  /** Writes one value of field `f` with its tag. */
  #value(f: FieldInfo, v: unknown, depth: number): void {
    const out = this.#out;
    switch (f.kind) {
      case Kind.String:
        if (typeof v !== "string") throw NOT_DIRECT;
        out.varint((f.id << 3) | 2);
        out.string(v);
        return;
      case Kind.Bytes: {
        if (!(v instanceof Uint8Array)) throw NOT_DIRECT;
        out.varint((f.id << 3) | 2);
        out.varint(v.length);
        out.room(v.length);
        out.buf.set(v, out.pos);
        out.pos += v.length;
        return;
      }
      case Kind.Message: {
        if (typeof v !== "object" || v === null) throw NOT_DIRECT;
        out.varint((f.id << 3) | 2);
        const start = out.open();
        this.#message(f.type!, v as Record<string, unknown>, depth + 1);
        out.close(start);
        return;
      }
      default:
        out.varint(((f.id << 3) | wireType(f.kind)) >>> 0);
        scalar(out, f, v);
    }
  }

  /** Writes the fields of `object` (a message of `type`), in field-number order. */
  #message(type: protobuf.Type, object: Record<string, unknown>, depth: number): void {
    if (depth > MAX_DEPTH || !plain(object)) throw NOT_DIRECT;
    let table = this.#tables.get(type);
    if (table === undefined) this.#tables.set(type, table = tableOf(type));
    if (table.required) throw NOT_DIRECT;
    const fields = table.fields;
    const present = this.#fields[depth] ??= [];
    const values = this.#values[depth] ??= [];
    let n = 0;
    for (const key in object) {
      const v = object[key];
      if (v == null) continue;
      const f = fields.get(key);
      if (f === undefined) continue; // not a field: neither verify, fromObject nor encode reads it
      if (f.kind === Kind.Other) throw NOT_DIRECT;
      if (f.oneof) { // verify's "multiple values"
        for (let j = 0; j < n; j++) if (present[j].oneof === f.oneof) throw NOT_DIRECT;
      }
      // Insertion into field-number order (a message has a handful of fields set).
      let i = n++;
      while (i > 0 && present[i - 1].id > f.id) {
        present[i] = present[i - 1];
        values[i] = values[i - 1];
        i--;
      }
      present[i] = f;
      values[i] = v;
    }
    const out = this.#out;
    for (let i = 0; i < n; i++) {
      const f = present[i], v = values[i];
      values[i] = undefined; // (no value kept alive by the scratch list)
      if (!f.repeated) {
        this.#value(f, v, depth);
        continue;
      }
      if (!Array.isArray(v)) throw NOT_DIRECT;
      if (v.length === 0) continue;
      if (f.packed) {
        out.varint((f.id << 3) | 2);
        const start = out.open();
        for (let j = 0; j < v.length; j++) scalar(out, f, v[j]);
        out.close(start);
      } else for (let j = 0; j < v.length; j++) this.#value(f, v[j], depth);
    }
  }
}
