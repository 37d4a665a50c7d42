/**
 * Test support: a corpus of Gateway API objects (the golden inputs in lib/gatewayapi/testdata/,
 * the benchmarks' synthetic config and a few seeds that reach rules the goldens leave one-sided)
 * and a generator of one-change mutations of an object along its schema (a field removed, added,
 * set to each enum value or a tricky value, a list item duplicated or dropped). Used by
 * lib/gatewayapi/cel_differential_test.ts and the API-server referee e2e test.
 * @module
 */
import { parseAllDocuments } from "yaml";
import { syntheticConfig } from "./synthetic_config.ts";
import { cloneData, isObject } from "../gatewayapi/clone.ts";
import { GATEWAY_KINDS } from "../gatewayapi/kinds.ts";
import type { Schema } from "../gatewayapi/structural_schema.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The Gateway API objects of the corpus: golden inputs, the bench's synthetic config, the seeds. */
export function corpus(): Json[] {
  const objects: Json[] = [];
  const dir = new URL("../gatewayapi/testdata/", import.meta.url);
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.name.endsWith(".in.yaml")) continue;
    for (const doc of parseAllDocuments(Deno.readTextFileSync(new URL(e.name, dir)))) {
      objects.push(doc.toJS());
    }
  }
  objects.push(...syntheticConfig({ services: 3, routes: 3, port: 10080 }), ...SEEDS);
  return objects.filter((o) =>
    isObject(o) && typeof o.kind === "string" && GATEWAY_KINDS.includes(o.kind)
  );
}

const V1 = "gateway.networking.k8s.io/v1";
const seed = (kind: string, spec: Json) => ({
  apiVersion: V1,
  kind,
  metadata: { name: "seed" },
  spec,
});
const gateway = (addresses: Json[]) =>
  seed("Gateway", {
    gatewayClassName: "c",
    listeners: [{ name: "a", port: 80, protocol: "HTTP" }],
    addresses,
  });
const prefixRewrite = (type: "URLRewrite" | "RequestRedirect") => {
  const member = type === "URLRewrite" ? "urlRewrite" : "requestRedirect";
  return {
    type,
    [member]: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/b" } },
  };
};
const matches = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ path: { type: "PathPrefix", value: `/${i}` } }));

/** Objects that reach rules the golden corpus leaves one-sided; mutated like the rest. */
export const SEEDS: Json[] = [
  gateway([{ type: "IPAddress", value: "10.0.0.1" }, { type: "Hostname", value: "a.example" }]),
  gateway([{ type: "Hostname", value: "a.example" }, { type: "IPAddress", value: "10.0.0.1" }]),
  seed("HTTPRoute", {
    rules: [{ filters: [{ type: "CORS", cors: { allowOrigins: ["https://a.example"] } }] }],
  }),
  ...(["URLRewrite", "RequestRedirect"] as const).map((type) =>
    seed("HTTPRoute", {
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: "/a" } }],
        backendRefs: [{ name: "s", port: 80, filters: [prefixRewrite(type)] }],
      }],
    })
  ),
];

/** Checked as they are, not mutated (too large): 128 matches in all, then 129. */
export const LARGE: Json[] = [
  seed("HTTPRoute", { rules: [{ matches: matches(64) }, { matches: matches(64) }] }),
  seed("HTTPRoute", {
    rules: [{ matches: matches(64) }, { matches: matches(64) }, { matches: matches(1) }],
  }),
];

const STRINGS = [
  "",
  "a",
  "/",
  "/a",
  "//a",
  "/a/../b",
  "/a/.",
  "/a/..",
  "/%2fa",
  "/a#b",
  "relative",
  "a b",
  "/a/./b",
  "/%2Fa",
  ".svc",
  "Svc_1",
  "1s",
  "2s",
  "0s",
  "Service",
  "Gateway",
  "HTTP",
  "HTTPS",
  "TLS",
  "TCP",
  "UDP",
  "Hostname",
  "IPAddress",
  "bad_host!",
  "10.0.0.1",
];
const INTS = [0, 1, 80, 100, 101, 8080];

/** A small value of `schema` to add where a field is missing. */
function sample(schema: Schema): unknown {
  switch (schema.t) {
    case "string":
      return schema.enum?.[0] ?? "a";
    case "int":
      return schema.enum?.[0] ?? 80;
    case "bool":
      return true;
    case "array":
      return [sample(schema.items)];
    case "map":
      return { a: sample(schema.values) };
    case "object": {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sample(schema.props[key]);
      return out;
    }
    default:
      return "a";
  }
}

/** Variants of `value` (at the root) with one change somewhere inside it. */
export function* mutations(schema: Schema, value: unknown): Generator<unknown> {
  if (schema.t === "string") {
    yield* [...(schema.enum ?? []), ...STRINGS].filter((s) => s !== value);
  } else if (schema.t === "int") {
    yield* [...(schema.enum ?? []), ...INTS].filter((n) => n !== value);
  } else if (schema.t === "array" && Array.isArray(value)) {
    if (value.length > 0) {
      yield [...value, cloneData(value[0])];
      yield value.slice(1);
    }
    for (let i = 0; i < value.length; i++) {
      for (const v of mutations(schema.items, value[i])) {
        yield [...value.slice(0, i), v, ...value.slice(i + 1)];
      }
    }
  } else if (schema.t === "object" && isObject(value)) {
    for (const [key, sub] of Object.entries(schema.props)) {
      if (value[key] === undefined) {
        yield { ...value, [key]: sample(sub) };
        continue;
      }
      const { [key]: _dropped, ...rest } = value;
      yield rest;
      for (const v of mutations(sub, value[key])) yield { ...value, [key]: v };
    }
  }
}
