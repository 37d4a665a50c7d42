import { assertEquals } from "../../testbed/assert.ts";
import type { EngineStatus } from "../../lib/engine/mod.ts";
import { CONTROLLER_STATUS_POINTER, nodeConfigStatus } from "./status_view.ts";

const status: EngineStatus = {
  revision: 3,
  version: "v3",
  servedRevision: 3,
  sinks: { xds: { revision: 3 } },
  objects: [{
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    namespace: "app",
    name: "web",
    status: { parents: [] },
  }],
  problems: [{
    kind: "HTTPRoute",
    name: "web",
    namespace: "app",
    field: "",
    message: "no backend",
  }],
  error: "last revision not served",
};

Deno.test("node /status from files: every object's computed status", () => {
  assertEquals(nodeConfigStatus(status, false), status);
});

Deno.test("node /status from the API server: own problems and a pointer, no object status", () => {
  const view = nodeConfigStatus(status, true);
  assertEquals(view.objects, [], "the controller's status is the one users read");
  assertEquals(view.problems, status.problems, "the node's own problems stay");
  assertEquals(view.error, status.error);
  assertEquals(view.revision, 3);
  assertEquals(view.objectStatus, CONTROLLER_STATUS_POINTER);
});
