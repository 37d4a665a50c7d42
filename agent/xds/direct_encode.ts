/**
 * A plain object (protobufjs `fromObject` form, already checked by `verify`) straight to
 * protobuf bytes, byte for byte what `type.encode(type.fromObject(object)).finish()` gives —
 * without the conversion's message objects and the Writer's one small object per value written
 * (two thirds of what encoding a cold snapshot allocated). One pass into one growing buffer: a
 * nested message gets one length byte up front, and its bytes move up when it turns out longer
 * than 127. Fields are written in field-number order, as protobufjs writes them.
 *
 * Only what it encodes exactly as protobufjs does is taken: a value `fromObject` would change
 * (an Any in its `{"@type": …}` form, a 32-bit integer out of range, a 64-bit one that is not a
 * safe integer, bytes as base64 text, a NaN), a map, a group, an object that is not a plain one
 * (a field could be inherited) — then {@link DirectEncoder.encode} answers undefined and the caller
 * converts and encodes with protobufjs as before.
 * @module
 */
import protobuf from "protobufjs";

/** How a field's values are written (wire type and conversion). */
const enum Kind {
  String,
  Bool,
  Int32,
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
}

/** Per message type, its fields by name (derived once from the immutable, resolved Root). */
type Table = ReadonlyMap<string, FieldInfo>;

/** The tables of one loaded Root's types. */
type DirectTables = WeakMap<protobuf.Type, Table>;

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

function tableOf(tables: DirectTables, type: protobuf.Type): Table {
  let table = tables.get(type);
  if (table) return table;
  const byName = new Map<string, FieldInfo>();
  for (const f of type.fieldsArray) {
    if (!f.resolved) f.resolve();
    const t = f.resolvedType;
    let kind: Kind;
    if (f.map || f.delimited) kind = Kind.Other;
    else if (t instanceof protobuf.Enum) kind = Kind.Int32;
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
    });
  }
  tables.set(type, table = byName);
  return table;
}

/** Whether `v` is a plain object: no prototype but Object's (no field inherited or a getter). */
function plain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Thrown inside the encoder when protobufjs should encode the object instead. */
class NotDirect {}
const NOT_DIRECT = new NotDirect();

/** A growing output buffer. */
class Out {
  buf = new Uint8Array(256);
  pos = 0;

  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.buf.subarray(0, this.pos));
    this.buf = bigger;
  }

  varint(v: number): void {
    this.room(5);
    const buf = this.buf;
    while (v > 127) {
      buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[this.pos++] = v;
  }

  /** A 64-bit varint of (lo, hi), each an unsigned 32-bit number (protobufjs's writeVarint64). */
  varint64(lo: number, hi: number): void {
    this.room(10);
    const buf = this.buf;
    while (hi) {
      buf[this.pos++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      buf[this.pos++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    buf[this.pos++] = lo;
  }

  /** A safe integer as protobufjs's LongBits.fromNumber writes it (two's complement). */
  long(v: number): void {
    const neg = v < 0;
    if (neg) v = -v;
    let lo = v >>> 0, hi = ((v - lo) / 4294967296) >>> 0;
    if (neg) {
      hi = ~hi >>> 0;
      lo = ~lo >>> 0;
      if (++lo > 4294967295) {
        lo = 0;
        if (++hi > 4294967295) hi = 0;
      }
    }
    this.varint64(lo, hi);
  }

  string(s: string): void {
    const n = s.length;
    this.room(n + 5);
    // One length byte reserved; ASCII text is as long as it is in UTF-8.
    let at = this.pos + (n < 128 ? 1 : n < 16384 ? 2 : 5);
    const start = at;
    const buf = this.buf;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) return this.utf8(s);
      buf[at++] = c;
    }
    this.varint(n);
    if (this.pos !== start) buf.copyWithin(this.pos, start, at);
    this.pos += n;
  }

  /** Non-ASCII text, exactly as protobufjs writes it (its own UTF-8 coder). */
  utf8(s: string): void {
    const { length, write } = protobuf.util.utf8;
    const n = length(s);
    this.varint(n);
    this.room(n);
    this.pos += write(s, this.buf, this.pos);
  }

  fixed32(v: number): void {
    this.room(4);
    new DataView(this.buf.buffer).setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  float(v: number, bytes: 4 | 8): void {
    this.room(bytes);
    const view = new DataView(this.buf.buffer);
    if (bytes === 4) view.setFloat32(this.pos, v, true);
    else view.setFloat64(this.pos, v, true);
    this.pos += bytes;
  }

  /** Ends a length-delimited part begun with one reserved byte at `start`. */
  close(start: number): void {
    const len = this.pos - start - 1;
    if (len < 128) {
      this.buf[start] = len;
      return;
    }
    let size = 1;
    while (len >= 2 ** (7 * size)) size++;
    this.room(size - 1);
    this.buf.copyWithin(start + size, start + 1, this.pos);
    const end = this.pos + size - 1;
    this.pos = start;
    this.varint(len);
    this.pos = end;
  }

  /** Reserves the length byte of a length-delimited part; returns where it is. */
  open(): number {
    this.room(1);
    return this.pos++;
  }
}

/** Writes one scalar value of `kind` (no tag). */
function scalar(out: Out, kind: Kind, v: unknown): void {
  switch (kind) {
    case Kind.Bool:
      if (typeof v !== "boolean") throw NOT_DIRECT;
      out.varint(v ? 1 : 0);
      return;
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
 * Encodes verified plain objects (see the module doc). Holds the per-type field tables (derived
 * once from the immutable, resolved types), one output buffer and per-depth scratch lists, reused
 * across calls: owned by one stream of snapshots (its Encodings); a call never runs inside
 * another (encoding calls nothing outside this module).
 */
export class DirectEncoder {
  readonly #tables: DirectTables = new WeakMap();
  readonly #out = new Out();
  /** Per nesting depth, the fields set in the message being written and their values. */
  readonly #fields: FieldInfo[][] = [];
  readonly #values: unknown[][] = [];

  /**
   * `type.encode(type.fromObject(object)).finish()`'s bytes for a verified `object`, or
   * undefined when the object holds what only protobufjs encodes exactly (see the module doc).
   */
  encode(type: protobuf.Type, object: Record<string, unknown>): Uint8Array | undefined {
    const out = this.#out;
    out.pos = 0;
    try {
      this.#message(type, object, 0);
    } catch (e) {
      if (e === NOT_DIRECT) return undefined;
      throw e;
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
        scalar(out, f.kind, v);
    }
  }

  /** Writes the fields of `object` (a message of `type`), in field-number order. */
  #message(type: protobuf.Type, object: Record<string, unknown>, depth: number): void {
    if (depth > MAX_DEPTH || !plain(object)) throw NOT_DIRECT;
    const table = tableOf(this.#tables, type);
    const present = this.#fields[depth] ??= [];
    const values = this.#values[depth] ??= [];
    let n = 0;
    for (const key in object) {
      const v = object[key];
      if (v == null) continue;
      const f = table.get(key);
      if (f === undefined) continue; // not a field: neither fromObject nor encode reads it
      if (f.kind === Kind.Other) throw NOT_DIRECT;
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
        for (let j = 0; j < v.length; j++) scalar(out, f.kind, v[j]);
        out.close(start);
      } else for (let j = 0; j < v.length; j++) this.#value(f, v[j], depth);
    }
  }
}
