import assert from "node:assert/strict";
import { crdNames, experimentalOnly } from "./channel.ts";

Deno.test("channel: the experimental-only CRDs are TCPRoute, UDPRoute and the x-k8s.io kinds", async () => {
  assert.deepEqual(await experimentalOnly(), [
    "tcproutes.gateway.networking.k8s.io",
    "udproutes.gateway.networking.k8s.io",
    "xbackendtrafficpolicies.gateway.networking.x-k8s.io",
    "xmeshes.gateway.networking.x-k8s.io",
  ]);
});

Deno.test("channel: CRD names come from CustomResourceDefinition documents only", () => {
  const files = [
    "kind: CustomResourceDefinition\nmetadata: {name: b.x.io}\n---\nkind: CustomResourceDefinition\nmetadata: {name: a.x.io}\n",
    "kind: ValidatingAdmissionPolicy\nmetadata: {name: safe-upgrades}\n",
  ];
  assert.deepEqual(crdNames(files), ["a.x.io", "b.x.io"]);
});
