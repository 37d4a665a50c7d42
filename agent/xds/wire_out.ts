/**
 * A growing buffer of protobuf wire values, written the way protobufjs's Writer writes them
 * (varints, 64-bit values of safe integers, ASCII text as it is and other text through
 * protobufjs's own UTF-8 coder, little-endian fixed-width numbers), with length-delimited parts
 * closed in place: direct_encode.ts's output.
 * @module
 */
import protobuf from "protobufjs";

/** A growing output buffer (reused: `pos = 0` starts over). */
export class WireOut {
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
