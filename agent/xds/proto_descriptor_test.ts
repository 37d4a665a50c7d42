/**
 * The generated Envoy API descriptor (envoy_api.gen.json) is what the `.proto` files give today,
 * and a Root made from it encodes every translated resource byte for byte like one parsed from
 * the `.proto` files.
 */
import assert from "node:assert/strict";
import protobuf from "protobufjs";
import { envoyRoot, loadEnvoyProtos, TypeUrl, typeUrlPrefix } from "./proto.ts";
import envoyApi from "./envoy_api.gen.json" with { type: "json" };
import { envoyApiJson, OUTPUT } from "../../tools/gen_envoy_api.ts";
import { goldenCases } from "./translate/_test_utils.ts";
import { nodeGoldenCases } from "./translate/node/_test_utils.ts";
import { translate } from "./translate/mod.ts";
import { translateNode } from "./translate/node/mod.ts";
import type { NamedResource } from "./cache/mod.ts";

Deno.test("envoy_api.gen.json is current (run `deno task gen-envoy-api` when this fails)", async () => {
  assert.deepEqual(JSON.parse(await Deno.readTextFile(OUTPUT)), JSON.parse(envoyApiJson()));
});

Deno.test("every type reference in the descriptor resolves (envoyRoot resolves them lazily)", () => {
  const root = protobuf.Root.fromJSON(envoyApi as protobuf.INamespace);
  root.resolveAll();
  const cluster = root.lookupType("envoy.config.cluster.v3.Cluster");
  assert.ok(cluster.fields.load_assignment.resolvedType instanceof protobuf.Type);
});

Deno.test("envoyRoot's lazily resolved types keep proto3's edition features (packed, presence)", () => {
  const policy = { retriable_status_codes: [500, 503], num_retries: { value: 0 } };
  const name = "envoy.config.route.v3.RetryPolicy";
  const [lazy, parsed] = [envoyRoot().lookupType(name), loadEnvoyProtos().lookupType(name)];
  assert.equal(lazy.fields.retriable_status_codes.packed, true);
  assert.deepEqual(bytes(lazy, policy), bytes(parsed, policy));
});

Deno.test("the descriptor's Root encodes every golden case's resources like the parsed protos", () => {
  const parsed = loadEnvoyProtos();
  const fromJson = envoyRoot();
  assert.notEqual(parsed, fromJson);
  const lists: [string, NamedResource[]][] = [];
  const add = (r: Record<string, NamedResource[] | undefined>) => {
    for (const [key, url] of Object.entries(listTypes)) lists.push([url, r[key] ?? []]);
  };
  for (const { ir } of goldenCases()) add({ ...translate(ir) });
  for (const c of nodeGoldenCases()) add({ ...translateNode(c.mesh, c.view, c.options) });
  let encoded = 0;
  for (const [url, list] of lists) {
    const name = url.slice(typeUrlPrefix.length);
    const [a, b] = [parsed.lookupType(name), fromJson.lookupType(name)];
    for (const { resource } of list) {
      assert.deepEqual(bytes(b, resource), bytes(a, resource), `${name} ${resource.name}`);
      encoded++;
    }
  }
  assert.ok(encoded > 100, `only ${encoded} resources encoded`);
});

const listTypes: Record<string, string> = {
  listeners: TypeUrl.listener,
  routes: TypeUrl.route,
  virtualHosts: TypeUrl.virtualHost,
  clusters: TypeUrl.cluster,
  endpoints: TypeUrl.endpoint,
  secrets: TypeUrl.secret,
};

function bytes(type: protobuf.Type, resource: Record<string, unknown>): Uint8Array {
  return type.encode(type.fromObject(resource)).finish();
}
