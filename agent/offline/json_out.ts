/**
 * JSON written as it is made: exactly the text of `JSON.stringify(doc, null, 2)`, but the parts of
 * `doc` given as a {@link JsonList} or {@link JsonObject} are printed one item at a time, each item
 * made (decoded, say) only when it is printed, so the whole document never exists at once, as
 * objects or as one string. Everything else is printed by `JSON.stringify` itself, re-indented to
 * its depth (a raw newline only ever separates tokens: one inside a string is escaped).
 * @module
 */

/** A JSON array whose items are made one at a time while it is printed. */
export class JsonList {
  constructor(readonly items: Iterable<unknown>) {}
}

/** A JSON object whose entries are made one at a time while it is printed. */
export class JsonObject {
  constructor(readonly entries: Iterable<readonly [string, unknown]>) {}
}

const STEP = "  ";

/** `value` as `JSON.stringify(value, null, 2)` prints it at `indent` (undefined: not printable). */
function plain(value: unknown, indent: string): string | undefined {
  const text = JSON.stringify(value, null, STEP);
  return text === undefined || indent === "" ? text : text.replaceAll("\n", "\n" + indent);
}

const streamed = (value: unknown): value is JsonList | JsonObject =>
  value instanceof JsonList || value instanceof JsonObject;

/**
 * Writes `value` as `JSON.stringify(value, null, 2)` would print it, in pieces: `write` is called
 * many times with short strings (give it a buffer, see {@link chunkedWriter}). A plain value's
 * `toJSON` is called with the key "" (JSON.stringify passes the property name).
 */
export function writeJson(value: unknown, write: (text: string) => void, indent = ""): void {
  const inner = indent + STEP;
  let first = true;
  if (value instanceof JsonList) {
    for (const item of value.items) {
      write(first ? "[\n" + inner : ",\n" + inner);
      first = false;
      if (streamed(item)) writeJson(item, write, inner);
      // An array prints a value JSON has no form for (undefined, a function) as null.
      else write(plain(item, inner) ?? "null");
    }
    write(first ? "[]" : "\n" + indent + "]");
  } else if (value instanceof JsonObject) {
    for (const [key, v] of value.entries) {
      // An object leaves such a value out, key and all.
      const text = streamed(v) ? undefined : plain(v, inner);
      if (text === undefined && !streamed(v)) continue;
      write((first ? "{\n" : ",\n") + inner + JSON.stringify(key) + ": ");
      first = false;
      if (text === undefined) writeJson(v, write, inner);
      else write(text);
    }
    write(first ? "{}" : "\n" + indent + "}");
  } else {
    const text = plain(value, indent);
    if (text === undefined) throw new TypeError("writeJson: JSON has no form for this value");
    write(text);
  }
}

/** A writer that hands `flush` chunks of at least `size` characters; call `end()` at the end. */
export function chunkedWriter(
  flush: (text: string) => void,
  size = 1 << 16,
): { write: (text: string) => void; end: () => void } {
  let parts: string[] = [];
  let length = 0;
  const end = () => {
    if (parts.length > 0) flush(parts.join(""));
    parts = [];
    length = 0;
  };
  return {
    write: (text) => {
      parts.push(text);
      length += text.length;
      if (length >= size) end();
    },
    end,
  };
}
