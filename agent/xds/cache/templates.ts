/**
 * Encoding by template: a resource whose fields, all but its first (field number 1: a Cluster's
 * `name`, a ClusterLoadAssignment's `cluster_name`, a VirtualHost's `name`), hold the very same
 * values as an earlier resource of its type — equal scalars, the same (shared, read-only)
 * sub-objects — encodes to that resource's bytes with the first field's bytes replaced. protobufjs
 * writes fields in field-number order, so field 1 leads and the rest does not depend on it. The
 * translator shares the parts every EDS cluster of one protocol has (translate/cluster.ts), so a
 * cold snapshot of thousands of clusters converts, verifies and encodes a handful of them.
 * @module
 */
import protobuf from "protobufjs";
import { messageType, typeUrlPrefix } from "../proto.ts";

/** An encoded resource, its bytes, and its bytes after field 1 (found on first use). */
interface Template {
  readonly resource: Record<string, unknown>;
  readonly bytes: Uint8Array;
  rest?: Uint8Array;
}

/** The bytes of `t` after field 1. */
function restOf(t: Template): Uint8Array {
  if (t.rest) return t.rest;
  const reader = protobuf.Reader.create(t.bytes);
  reader.uint32();
  reader.skipType(2);
  return t.rest = t.bytes.subarray(reader.pos);
}

/** How many recent templates of a type a resource is compared with. */
const KEEP = 4;

/** Tag of field 1, wire type 2 (length-delimited): `(1 << 3) | 2`. */
const FIELD_1_TAG = 10;

/** Whether `b` has exactly `a`'s fields with the same values, except `first` (a string in both). */
function sameButFirst(a: Record<string, unknown>, b: Record<string, unknown>, first: string) {
  let count = 0;
  for (const key in b) {
    if (key !== first && a[key] !== b[key]) return false;
    count++;
  }
  for (const _ in a) count--;
  return count === 0;
}

/** The name of field 1 of a resource type when it is a single string, else undefined. */
function firstStringField(typeUrl: string): string | undefined {
  const field = messageType(typeUrl.slice(typeUrlPrefix.length)).fieldsById[1];
  return field && field.type === "string" && !field.repeated && !field.map ? field.name : undefined;
}

/**
 * The recent resources of each type and their bytes after field 1, for one stream of snapshots
 * (a snapshot's Encodings). Counts the resources encoded by template (hits) and whole (misses).
 */
export class Templates {
  #byType = new Map<string, { first?: string; recent: Template[] }>();
  hits = 0;
  misses = 0;

  /**
   * The encoding of `resource` (of `typeUrl`): by a template when one fits, else `whole()` (the
   * resource converted, verified and encoded), remembered as a template.
   */
  encode(typeUrl: string, resource: Record<string, unknown>, whole: () => Uint8Array): Uint8Array {
    let type = this.#byType.get(typeUrl);
    if (!type) this.#byType.set(typeUrl, type = { first: firstStringField(typeUrl), recent: [] });
    const first = type.first;
    const value = first === undefined ? undefined : resource[first];
    if (typeof value !== "string") return whole();
    for (const t of type.recent) {
      if (!sameButFirst(t.resource, resource, first!)) continue;
      this.hits++;
      const rest = restOf(t);
      const head = new protobuf.Writer().uint32(FIELD_1_TAG).string(value).finish();
      const out = new Uint8Array(head.length + rest.length);
      out.set(head);
      out.set(rest, head.length);
      return out;
    }
    this.misses++;
    const bytes = whole();
    // Field 1 leads the encoding (a one-byte tag) whenever it is set, as it is here.
    if (bytes[0] === FIELD_1_TAG) {
      type.recent.unshift({ resource, bytes });
      if (type.recent.length > KEEP) type.recent.pop();
    }
    return bytes;
  }
}
