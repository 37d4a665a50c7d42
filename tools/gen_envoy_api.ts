/**
 * Generates agent/xds/envoy_api.gen.json — protobufjs's JSON form of Envoy's API as
 * agent/xds/proto.ts parses it from the `.proto` files of npm `@grpc/grpc-js-xds` (plus its
 * `newerFields`). Run `deno task gen-envoy-api` after changing the proto entry files, the newer
 * fields or the package version; proto_descriptor_test.ts fails while the file is stale.
 *
 *   deno run -A tools/gen_envoy_api.ts
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { loadEnvoyProtos } from "../agent/xds/proto.ts";

/** The generated descriptor. */
export const OUTPUT = fileURLToPath(new URL("../agent/xds/envoy_api.gen.json", import.meta.url));

/** The descriptor text for the protos as they are now. */
export function envoyApiJson(): string {
  return JSON.stringify(loadEnvoyProtos().toJSON()) + "\n";
}

if (import.meta.main) {
  await Deno.writeTextFile(OUTPUT, envoyApiJson());
  console.log(`wrote ${OUTPUT}`);
}
