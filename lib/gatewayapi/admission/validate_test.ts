import assert from "node:assert/strict";
import * as validate from "./validate.ts";
import { ADMISSION_KINDS } from "../read_kinds.ts";
import type { KubeObject } from "../types.ts";

/** The two halves of admission, with aether's kinds. */
const applyDefaults = (obj: KubeObject) => validate.applyDefaults(obj, ADMISSION_KINDS);
const validateObject = (obj: KubeObject) => validate.validateObject(obj, ADMISSION_KINDS);

const route = (spec: unknown, kind = "HTTPRoute"): KubeObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind,
  metadata: { name: "r", namespace: "ns" },
  spec,
});

/** The problems of a defaulted object as `field: message` lines. */
const check = (obj: KubeObject) =>
  validateObject(applyDefaults(obj)).map((p) => `${p.field}: ${p.message}`);

Deno.test("defaults: HTTPRoute rules, matches, weights, parentRefs, redirects", () => {
  const out = applyDefaults(route({
    parentRefs: [{ name: "gw" }],
    rules: [
      { backendRefs: [{ name: "svc", port: 80 }] },
      {
        matches: [{ headers: [{ name: "x", value: "1" }] }],
        filters: [{ type: "RequestRedirect", requestRedirect: {} }],
      },
    ],
  }));
  assert.deepEqual(out.spec.parentRefs, [{
    group: "gateway.networking.k8s.io",
    kind: "Gateway",
    name: "gw",
  }]);
  assert.deepEqual(out.spec.rules[0].matches, [{ path: { type: "PathPrefix", value: "/" } }]);
  assert.deepEqual(out.spec.rules[0].backendRefs, [{
    group: "",
    kind: "Service",
    name: "svc",
    port: 80,
    weight: 1,
  }]);
  assert.deepEqual(out.spec.rules[1].matches, [{
    path: { type: "PathPrefix", value: "/" },
    headers: [{ type: "Exact", name: "x", value: "1" }],
  }]);
  assert.equal(out.spec.rules[1].filters[0].requestRedirect.statusCode, 302);
  assert.deepEqual(applyDefaults(route({})).spec.rules, [{
    matches: [{ path: { type: "PathPrefix", value: "/" } }],
  }]);
});

Deno.test("defaults: Gateway listeners, namespace, input untouched", () => {
  const gw: KubeObject = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "gw" },
    spec: {
      gatewayClassName: "c",
      listeners: [{
        name: "https",
        port: 443,
        protocol: "HTTPS",
        tls: { certificateRefs: [{ name: "s" }] },
      }],
    },
  };
  const out = applyDefaults(gw);
  assert.equal(out.metadata.namespace, "default");
  assert.deepEqual(out.spec.listeners[0].allowedRoutes, { namespaces: { from: "Same" } });
  assert.deepEqual(out.spec.listeners[0].tls, {
    mode: "Terminate",
    certificateRefs: [{ group: "", kind: "Secret", name: "s" }],
  });
  assert.equal(gw.metadata.namespace, undefined);
  assert.equal(gw.spec.listeners[0].allowedRoutes, undefined);
});

Deno.test("validate: schema errors name the field", () => {
  assert.deepEqual(
    check(route({ rules: [{ matches: [{}, { path: { type: "Exact", value: "/a//b" } }] }] })),
    [
      "spec.rules[0].matches[1].path: must not contain '//' when type one of ['Exact', 'PathPrefix']",
    ],
  );
  assert.deepEqual(
    check(
      route({
        hostnames: ["Foo.com"],
        rules: [{ backendRefs: [{ name: "s", port: 80, weight: -1 }] }],
      }),
    ),
    [
      'spec.hostnames[0]: "Foo.com" must match ^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
      "spec.rules[0].backendRefs[0].weight: must be at least 0",
    ],
  );
  assert.deepEqual(check(route({ rules: [{ matchs: [] }] })), [
    'spec.rules[0].matchs: unknown field "matchs"',
  ]);
  assert.deepEqual(check(route({ rules: [{ matches: [{ method: "FETCH" }] }] })), [
    'spec.rules[0].matches[0].method: unsupported value "FETCH": must be one of GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH',
  ]);
  assert.deepEqual(check(route({ rules: [{ timeouts: { request: "1 s" } }] })), [
    'spec.rules[0].timeouts.request: "1 s" must match ^([0-9]{1,5}(h|m|s|ms)){1,4}$',
  ]);
});

Deno.test("validate: CEL rules name the node they are on", () => {
  assert.deepEqual(check(route({ rules: [{ backendRefs: [{ name: "s" }] }] })), [
    "spec.rules[0].backendRefs[0]: Must have port for Service reference",
  ]);
  assert.deepEqual(
    check(route({ parentRefs: [{ name: "gw" }, { name: "gw", sectionName: "a" }] })),
    [
      "spec.parentRefs: sectionName or port must be specified when parentRefs includes 2 or more references to the same parent",
    ],
  );
  assert.deepEqual(
    check(
      route({ parentRefs: [{ name: "gw", sectionName: "a" }, { name: "gw", sectionName: "a" }] }),
    ),
    [
      "spec.parentRefs: sectionName or port must be unique when parentRefs includes 2 or more references to the same parent",
    ],
  );
  assert.deepEqual(
    check(route({
      rules: [{
        filters: [{ type: "RequestRedirect", requestRedirect: {} }],
        backendRefs: [{ name: "s", port: 80 }],
      }],
    })),
    ["spec.rules[0]: RequestRedirect filter must not be used together with backendRefs"],
  );
  assert.deepEqual(
    check(route({
      rules: [{
        matches: [{ path: { type: "Exact", value: "/a" } }],
        filters: [{
          type: "URLRewrite",
          urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/b" } },
        }],
      }],
    })),
    ["spec.rules[0]: When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"],
  );
  assert.deepEqual(check(route({ rules: [{ filters: [{ type: "RequestHeaderModifier" }] }] })), [
    "spec.rules[0].filters[0]: filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type",
  ]);
  assert.deepEqual(
    check(route({ rules: [{ timeouts: { request: "1s", backendRequest: "2s" } }] })),
    [
      "spec.rules[0].timeouts: backendRequest timeout cannot be longer than request timeout",
    ],
  );
  assert.deepEqual(
    check(route({ rules: [{ matches: [{ method: { service: "a b" } }] }] }, "GRPCRoute")),
    [
      "spec.rules[0].matches[0].method: service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)",
    ],
  );
});

Deno.test("validate: Gateway listener rules and object-level problems", () => {
  const gw = (listeners: unknown[]): KubeObject => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "gw", namespace: "ns" },
    spec: { gatewayClassName: "c", listeners },
  });
  assert.deepEqual(
    check(
      gw([{ name: "a", port: 80, protocol: "HTTP" }, { name: "a", port: 81, protocol: "HTTP" }]),
    ),
    [
      'spec.listeners[1]: Duplicate value: "a"',
      "spec.listeners: Listener name must be unique within the Gateway",
    ],
  );
  assert.deepEqual(
    check(gw([{ name: "a", port: 80, protocol: "HTTP", tls: { options: { a: "b" } } }])),
    [
      "spec.listeners: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
    ],
  );
  assert.deepEqual(check(gw([{ name: "a", port: 443, protocol: "HTTPS", tls: {} }])), [
    "spec.listeners[0].tls: certificateRefs or options must be specified when mode is Terminate",
  ]);
  assert.deepEqual(check(gw([])), ["spec.listeners: must have at least 1 item(s)"]);
  const bad = validateObject({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "p", namespace: "ns" },
  });
  assert.deepEqual(bad, [{
    kind: "Deployment",
    namespace: "ns",
    name: "p",
    field: "kind",
    message: 'unsupported kind "Deployment"',
  }]);
  // Pods are a known kind (the node role reads them): no problem.
  assert.deepEqual(
    validateObject({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "ns" } }),
    [],
  );
  assert.deepEqual(
    check({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "Bad_Name" },
      spec: { controllerName: "x/y" },
    }),
    [
      'metadata.name: "Bad_Name" must be a lowercase RFC 1123 subdomain',
    ],
  );
});
