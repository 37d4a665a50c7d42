/**
 * Builders for the Gateway API and core objects tests and benchmarks feed to resolve or to an
 * agent: aether's GatewayClass, a Gateway, an HTTPRoute, a Namespace, and multi-document YAML of
 * them. e2e/harness.ts passes them on to the end-to-end tests.
 * @module
 */
import type { KubeObject } from "../gatewayapi/types.ts";

/** The GatewayClass aether claims. */
export function gatewayClass(name = "aether"): KubeObject {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GatewayClass",
    metadata: { name },
    spec: { controllerName: "gateway.aether.io/edge" },
  };
}

/**
 * A Gateway of class aether with the given listeners (each `{name, protocol, port, hostname?,
 * ...}`) and further spec fields in `spec` (e.g. `addresses`).
 */
export function gateway(
  name: string,
  listeners: Record<string, unknown>[],
  namespace = "default",
  spec: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name, namespace, generation: 1 },
    spec: { gatewayClassName: "aether", listeners, ...spec },
  };
}

/** An HTTPRoute with the given spec. */
export function httpRoute(
  name: string,
  spec: Record<string, unknown>,
  namespace = "default",
  creationTimestamp = "2026-01-01T00:00:00Z",
): KubeObject {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name, namespace, generation: 1, creationTimestamp },
    spec,
  };
}

/** A Namespace with labels. */
export function namespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } },
  };
}

/** Serializes objects as one multi-document YAML text (JSON is YAML). */
export const toYaml = (...objects: KubeObject[]): string =>
  objects.map((o) => JSON.stringify(o)).join("\n---\n");
