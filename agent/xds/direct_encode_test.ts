import assert from "node:assert/strict";
import protobuf from "protobufjs";
import { messageType, TypeUrl, typeUrlPrefix } from "./proto.ts";
import { DirectEncoder } from "./direct_encode.ts";
import { translate } from "./translate/mod.ts";
import { goldenCases, resourcesByType } from "./translate/_test_utils.ts";
import { Snapshot } from "./cache/mod.ts";

/** protobufjs's way, the reference: convert, then encode. */
const reference = (type: protobuf.Type, object: Record<string, unknown>) =>
  type.encode(type.fromObject(object), new protobuf.Writer()).finish();

/** Asserts the direct bytes are the reference's; returns whether it encoded directly at all. */
function same(encoder: DirectEncoder, typeName: string, object: Record<string, unknown>) {
  const type = messageType(typeName);
  assert.equal(type.verify(object), null, typeName);
  const direct = encoder.encode(type, object);
  if (direct) assert.deepEqual(direct, reference(type, object), JSON.stringify(object));
  return direct !== undefined;
}

Deno.test("every golden resource encodes directly to protobufjs's bytes, or is left to it", () => {
  const encoder = new DirectEncoder();
  let direct = 0, left = 0;
  for (const { ir } of goldenCases()) {
    const r = translate(ir);
    const kinds = resourcesByType(r);
    for (const [url, list] of kinds) {
      for (const res of list) {
        if (same(encoder, url.slice(typeUrlPrefix.length), res.resource)) direct++;
        else left++;
      }
    }
  }
  assert.ok(direct > 0 && left > 0, `${direct} direct, ${left} left to protobufjs`);
});

Deno.test("scalars, text and lengths encode as protobufjs encodes them", () => {
  const e = new DirectEncoder();
  const cases: [string, Record<string, unknown>][] = [
    ["google.protobuf.Int32Value", { value: -5 }],
    ["google.protobuf.Int32Value", { value: 2 ** 31 - 1 }],
    ["google.protobuf.Int32Value", { value: 0 }],
    ["google.protobuf.UInt32Value", { value: 2 ** 32 - 1 }],
    ["google.protobuf.Int64Value", { value: -(2 ** 40) - 3 }],
    ["google.protobuf.Int64Value", { value: Number.MAX_SAFE_INTEGER }],
    ["google.protobuf.UInt64Value", { value: 2 ** 50 + 1 }],
    ["google.protobuf.DoubleValue", { value: -0.1 }],
    ["google.protobuf.DoubleValue", { value: -0 }],
    ["google.protobuf.FloatValue", { value: 1.5e30 }],
    ["google.protobuf.BoolValue", { value: false }],
    ["google.protobuf.BoolValue", { value: true }],
    ["google.protobuf.BytesValue", { value: new Uint8Array([0, 1, 255]) }],
    ["google.protobuf.BytesValue", { value: new Uint8Array(0) }],
    ["google.protobuf.StringValue", { value: "" }],
    ["google.protobuf.StringValue", { value: "héllo ☃ 😀" }],
    ["google.protobuf.StringValue", { value: "lone \ud800 surrogate" }],
    ["google.protobuf.StringValue", { value: "x".repeat(127) }],
    ["google.protobuf.StringValue", { value: "x".repeat(128) }],
    ["google.protobuf.StringValue", { value: "y".repeat(16384) }],
    ["google.protobuf.StringValue", { value: "é".repeat(9000) }],
    ["google.protobuf.Duration", { seconds: 3, nanos: 500 }],
  ];
  for (const [type, object] of cases) assert.ok(same(e, type, object), JSON.stringify(object));
  // Nested messages past 127 and 16383 bytes (their length moves their bytes up), packed
  // repeated integers, fields set out of field-number order, a key that is no field.
  const vh = {
    routes: [{ name: "r".repeat(200), match: { prefix: "/" }, route: { cluster: "c" } }],
    retry_policy: { retriable_status_codes: [503, 504, 100000], retry_on: "5xx" },
    domains: ["a", "b".repeat(20000)],
    name: "v",
    not_a_field: { "@type": "ignored" },
    include_request_attempt_count: true,
  };
  assert.ok(same(e, "envoy.config.route.v3.VirtualHost", vh));
});

Deno.test("what fromObject would change is left to protobufjs", () => {
  const e = new DirectEncoder();
  const left = (typeName: string, object: Record<string, unknown>) =>
    assert.equal(e.encode(messageType(typeName), object), undefined, JSON.stringify(object));
  left("google.protobuf.Int32Value", { value: 2 ** 31 }); // |0 in fromObject
  left("google.protobuf.UInt32Value", { value: 2 ** 32 + 5 }); // >>>0
  left("google.protobuf.UInt64Value", { value: -1 }); // Long.fromValue(-1, unsigned) is 0
  left("google.protobuf.Int64Value", { value: 2 ** 60 }); // not a safe integer
  left("google.protobuf.DoubleValue", { value: NaN });
  left("google.protobuf.BytesValue", { value: "AQI=" }); // base64 text
  left("google.protobuf.StringValue", { value: new String("boxed") });
  left("google.protobuf.StringValue", Object.create({ value: "inherited" }));
  // An Any in its {"@type": …} form, and a map (of Anys).
  left("envoy.config.cluster.v3.Cluster", {
    name: "c",
    typed_extension_protocol_options: {
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
        "@type": typeUrlPrefix + "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
        explicit_http_config: { http2_protocol_options: {} },
      },
    },
  });
  // The encoder is fine after a refusal.
  assert.ok(same(e, "google.protobuf.StringValue", { value: "after" }));
});

Deno.test("it writes only what verify accepts: misfits are left to protobufjs and its error", () => {
  const e = new DirectEncoder();
  const vh = messageType("envoy.config.route.v3.VirtualHost");
  const route = (match: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    name: "v",
    domains: ["*"],
    routes: [{ match, route: { cluster: "c", ...extra } }],
  });
  const refused = [
    route({ prefix: "/", path: "/x" }), // two fields of one oneof
    route({ prefix: "/" }, { cluster_not_found_response_code: 99 }), // not an enum value
    route({ prefix: 5 }), // a number for a string
    route({ prefix: "/" }, { timeout: "5s" }), // text for a message
  ];
  for (const object of refused) {
    assert.notEqual(vh.verify(object), null);
    assert.equal(e.encode(vh, object), undefined, JSON.stringify(object));
  }
  // Through a snapshot, the misfit is reported with verify's words, as before.
  assert.throws(
    () => Snapshot.fromResources({ virtualHosts: [{ name: "v", resource: refused[0] }] }),
    /path_specifier: multiple values/,
  );
});

Deno.test("random misfits of golden resources: bytes only when verify accepts, and then exact", () => {
  let seed = 21;
  const random = (n: number) => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) >>> 8) % n;
  const pool = () => [
    999,
    -1,
    2 ** 31,
    1.5,
    NaN,
    "text",
    true,
    {},
    [],
    null,
    new Uint8Array([7]),
    ["a"],
    [1, 2],
    { "@type": typeUrlPrefix + "google.protobuf.Empty" },
    3,
    0,
    "",
    [{}],
  ];
  const e = new DirectEncoder();
  let direct = 0, refused = 0;
  const cases = goldenCases().map(({ ir }) => translate(ir));
  for (let round = 0; round < 3000; round++) {
    const r = cases[random(cases.length)];
    const kinds = [
      [TypeUrl.cluster, r.clusters],
      [TypeUrl.endpoint, r.endpoints],
      [TypeUrl.virtualHost, r.virtualHosts ?? []],
      [TypeUrl.route, r.routes],
    ] as const;
    const [url, list] = kinds[random(kinds.length)];
    if (list.length === 0) continue;
    const type = messageType(url.slice(typeUrlPrefix.length));
    const object = structuredClone(list[random(list.length)].resource) as Record<string, unknown>;
    // A message somewhere in it (with its type), one of its fields set to something else.
    const spots: [protobuf.Type, Record<string, unknown>][] = [];
    const walk = (t: protobuf.Type, o: Record<string, unknown>) => {
      if (t.fieldsArray.length > 0) spots.push([t, o]);
      for (const f of t.fieldsArray) {
        const v = o[f.name];
        if (!(f.resolve().resolvedType instanceof protobuf.Type) || f.map || v == null) continue;
        for (const x of Array.isArray(v) ? v : [v]) {
          if (typeof x === "object" && x !== null && !("@type" in x)) {
            walk(f.resolvedType as protobuf.Type, x);
          }
        }
      }
    };
    walk(type, object);
    const [t, o] = spots[random(spots.length)];
    const values = pool();
    o[t.fieldsArray[random(t.fieldsArray.length)].name] = values[random(values.length)];
    const bytes = e.encode(type, object);
    if (bytes === undefined) {
      refused++;
      continue;
    }
    direct++;
    assert.equal(type.verify(object), null, JSON.stringify(object));
    assert.deepEqual(bytes, reference(type, object));
  }
  assert.ok(direct > 100 && refused > 100, `${direct} direct, ${refused} refused`);
});
