/**
 * Encoding by template: resources whose fields but the first hold the very same values as an
 * earlier one's are encoded as its bytes with field 1 replaced — byte for byte what encoding them
 * whole gives; anything else (an equal but distinct sub-object, another scalar, a field more) is
 * encoded whole.
 */
import assert from "node:assert/strict";
import { encodeResource, TypeUrl } from "../proto.ts";
import { Encodings, type NamedResource, Snapshot } from "./snapshot.ts";

const eds = { eds_config: { ads: {}, resource_api_version: 2 } };
const timeout = { seconds: 5 };
const options = {
  "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
    "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
    explicit_http_config: { http_protocol_options: {} },
  },
};

const cluster = (name: string, extra: Record<string, unknown> = {}): NamedResource => ({
  name,
  resource: {
    name,
    type: 3,
    eds_cluster_config: eds,
    connect_timeout: timeout,
    lb_policy: 0,
    typed_extension_protocol_options: options,
    ...extra,
  },
});

/** Each cluster's encoding in `snapshot` equals its whole encoding. */
function assertWhole(snapshot: Snapshot, list: NamedResource[]) {
  const items = snapshot.resources(TypeUrl.cluster).items;
  for (const { name, resource } of list) {
    const whole = encodeResource(TypeUrl.cluster, resource);
    assert.deepEqual(new Uint8Array(items.get(name)!.value), new Uint8Array(whole), name);
  }
}

Deno.test("templates: clusters sharing their parts encode once, byte for byte as whole", () => {
  const names = [
    "a",
    "",
    "ünïcödé-ß",
    "x".repeat(300),
    ...Array.from({ length: 50 }, (_, i) => `svc-${i}`),
  ];
  const list = names.map((n) => cluster(n));
  const encodings = new Encodings();
  const snapshot = Snapshot.fromResources({ clusters: list }, undefined, encodings);
  assertWhole(snapshot, list);
  assert.equal(encodings.templates.misses, 1, "the first cluster encoded whole");
  assert.equal(encodings.templates.hits, list.length - 1, "the others by its template");
});

Deno.test("templates: an equal but distinct part, another value or another field: encoded whole", () => {
  const list = [
    cluster("first"),
    cluster("own-timeout", { connect_timeout: { seconds: 5 } }),
    cluster("same-as-first"),
    cluster("other-policy", { lb_policy: 1 }),
    cluster("more", { per_connection_buffer_limit_bytes: { value: 1024 } }),
    cluster("fewer", { typed_extension_protocol_options: undefined }),
  ];
  const encodings = new Encodings();
  const snapshot = Snapshot.fromResources({ clusters: list }, undefined, encodings);
  assertWhole(snapshot, list);
  assert.equal(encodings.templates.misses, 5);
  assert.equal(encodings.templates.hits, 1);
});

Deno.test("templates: a resource that does not fit still fails, naming it", () => {
  const encodings = new Encodings();
  const list = [cluster("good"), cluster("bad", { lb_policy: "NOT_A_POLICY" })];
  assert.throws(
    () => Snapshot.fromResources({ clusters: list }, undefined, encodings),
    /resource "bad"/,
  );
});
