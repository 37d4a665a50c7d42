/**
 * The mesh as an object: Gateway API's XMesh (`gateway.networking.x-k8s.io/v1alpha1`, experimental
 * channel) names the controller of a mesh and carries, in its status, the features that mesh
 * supports — where the conformance suite (`--mesh-name`) and users read them, as they read a
 * GatewayClass's. aether accepts every XMesh whose `spec.controllerName` is its mesh controller
 * name. Its features are those of GAMMA on transparent capture; without capture (pods reach the
 * node proxy only through the explicit `127.0.0.1:18081` lane) no Mesh feature holds, so none is
 * listed.
 * @module
 */
import { ConditionFactory, pass } from "../status/mod.ts";

/** XMesh `status.supportedFeatures` of aether's mesh with transparent capture, sorted. */
export const MESH_FEATURES: readonly string[] = Object.freeze([
  "GRPCRoute",
  "HTTPRoute",
  "Mesh",
  "MeshClusterIPMatching",
  "MeshConsumerRoute",
  "MeshHTTPRouteBackendRequestHeaderModification",
  "MeshHTTPRouteNamedRouteRule",
  "MeshHTTPRouteQueryParamMatching",
  "MeshHTTPRouteRedirectPath",
  "MeshHTTPRouteRedirectPort",
  "MeshHTTPRouteRewritePath",
  "MeshHTTPRouteSchemeRedirect",
]);

/** The spec of an XMesh (what aether reads of it). */
export interface XMeshSpec {
  controllerName: string;
  description?: string;
}

/** Status of one of our XMesh objects: accepted and programmed, with `features`. */
export function xmeshStatus(generation: number, now: string, features: readonly string[]) {
  const c = new ConditionFactory(generation, now);
  const how = features.length > 0
    ? "GAMMA routes on transparent capture"
    : "transparent capture is off: pods reach the node proxy only through 127.0.0.1:18081, " +
      "so no Mesh feature is supported (install the chart with agent.gamma and transparentCapture)";
  return {
    conditions: [
      c.of("Accepted", pass("Accepted", `accepted by aether: ${how}`)),
      c.of(
        "Programmed",
        pass("Programmed", "the node agents program the mesh from the API server"),
      ),
    ],
    supportedFeatures: [...features].sort().map((name) => ({ name })),
  };
}
