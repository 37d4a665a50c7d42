/**
 * `gatewayOwnProxies`: with a proxy per Gateway (the controller's edges), two Gateways listening
 * on the same port with the same hostname are both Accepted; with one proxy for every Gateway (the
 * default) the younger one is PortUnavailable / HostnameConflict.
 */
import assert from "node:assert/strict";
import { CelRules } from "./admission/mod.ts";
import { resolve } from "./resolve.ts";
import { ResolveState } from "./state/mod.ts";
import type { KubeObject } from "./types.ts";

const gateway = (name: string, created: string, ports: number[]): KubeObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name, namespace: "infra", creationTimestamp: created },
  spec: {
    gatewayClassName: "aether",
    listeners: ports.map((port, i) => ({ name: `http-${i}`, port, protocol: "HTTP" })),
  },
});

const objects: KubeObject[] = [
  {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GatewayClass",
    metadata: { name: "aether" },
    spec: { controllerName: "gateway.aether.io/edge" },
  },
  gateway("all-namespaces", "2026-01-01T00:00:00Z", [80]),
  gateway("same-namespace", "2026-01-01T00:00:01Z", [80]),
];

type Condition = { type: string; status: string; reason: string };

function accepted(ownProxies: boolean): Record<string, string[]> {
  const { statuses } = resolve(objects, { gatewayOwnProxies: ownProxies });
  const out: Record<string, string[]> = {};
  for (const s of statuses.filter((s) => s.kind === "Gateway")) {
    const st = s.status as { listeners: { conditions: Condition[] }[] };
    out[s.name] = st.listeners.map((l) => {
      const c = l.conditions.find((c) => c.type === "Accepted")!;
      return `${c.status}/${c.reason}`;
    });
  }
  return out;
}

Deno.test("one proxy for every Gateway: the younger Gateway's *:80 conflicts", () => {
  assert.deepEqual(accepted(false), {
    "all-namespaces": ["True/Accepted"],
    "same-namespace": ["False/PortUnavailable"],
  });
});

Deno.test("a proxy per Gateway: both Gateways' *:80 Accepted", () => {
  assert.deepEqual(accepted(true), {
    "all-namespaces": ["True/Accepted"],
    "same-namespace": ["True/Accepted"],
  });
});

/** Two Gateways with a TLS passthrough listener on 443, one TLSRoute each for the same name. */
const tls: KubeObject[] = [
  objects[0],
  ...["x-1", "x-2"].map((name, i): KubeObject => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name, namespace: "infra", creationTimestamp: `2026-01-01T00:00:0${i}Z` },
    spec: {
      gatewayClassName: "aether",
      listeners: [{ name: "tls", port: 443, protocol: "TLS", tls: { mode: "Passthrough" } }],
    },
  })),
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "tls-backend", namespace: "infra" },
    spec: { ports: [{ port: 443 }] },
  },
  ...["x-1", "x-2"].map((gw, i): KubeObject => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "TLSRoute",
    metadata: {
      name: `route-${gw}`,
      namespace: "infra",
      creationTimestamp: `2026-01-01T00:00:0${i}Z`,
    },
    spec: {
      parentRefs: [{ name: gw }],
      hostnames: ["abc.example.com"],
      rules: [{ backendRefs: [{ name: "tls-backend", port: 443 }] }],
    },
  })),
];

async function tlsRoutesAccepted(ownProxies: boolean): Promise<Record<string, string>> {
  // TLSRoute hostnames are checked by CRD rules that run on the CEL library.
  const state = new ResolveState(await new CelRules().load());
  const { statuses } = resolve(tls, { gatewayOwnProxies: ownProxies }, state);
  const out: Record<string, string> = {};
  for (const s of statuses.filter((s) => s.kind === "TLSRoute")) {
    const st = s.status as { parents: { conditions: Condition[] }[] };
    const c = st.parents[0].conditions.find((c) => c.type === "Accepted")!;
    out[s.name] = `${c.status}/${c.reason}`;
  }
  return out;
}

Deno.test("TLSRoutes for one SNI name on two Gateways: rivals on one proxy, both Accepted with a proxy each", async () => {
  assert.deepEqual(await tlsRoutesAccepted(false), {
    "route-x-1": "True/Accepted",
    "route-x-2": "False/NotAllowedByListeners",
  });
  assert.deepEqual(await tlsRoutesAccepted(true), {
    "route-x-1": "True/Accepted",
    "route-x-2": "True/Accepted",
  });
});
