import assert from "node:assert/strict";
import { metallbObjects, upstreamManifest } from "./metallb.ts";

Deno.test("metallb objects: upstream CRDs and controller, no speaker or webhooks, our image and pool", async () => {
  const docs = metallbObjects(await upstreamManifest(), "img:1", "10.216.0.0/24");
  const kinds = new Set(docs.map((d) => d.kind));
  assert.ok(!kinds.has("DaemonSet"), "no speaker");
  assert.ok(!kinds.has("ValidatingWebhookConfiguration"), "no webhooks");
  assert.ok(!docs.some((d) => String(d.metadata?.name).includes("speaker")));
  const crds = docs.filter((d) => d.kind === "CustomResourceDefinition").map((d) =>
    d.metadata.name
  );
  assert.ok(crds.includes("ipaddresspools.metallb.io"), `CRDs from the module: ${crds}`);
  for (const d of docs.filter((d) => d.kind === "CustomResourceDefinition")) {
    assert.notEqual(
      d.spec.conversion?.strategy,
      "Webhook",
      `${d.metadata.name} converts in-process`,
    );
  }
  const deploy = docs.filter((d) => d.kind === "Deployment");
  assert.equal(deploy.length, 1);
  const c = deploy[0].spec.template.spec.containers[0];
  assert.equal(c.image, "img:1");
  assert.equal(c.imagePullPolicy, "Never");
  assert.ok(c.args.includes("--webhook-mode=disabled"));
  const pool = docs.at(-1)!;
  assert.equal(pool.kind, "IPAddressPool");
  assert.deepEqual(pool.spec.addresses, ["10.216.0.0/24"]);
  // RBAC of the controller comes along (it updates services/status).
  assert.ok(
    docs.some((d) => d.kind === "ClusterRole" && d.metadata.name === "metallb-system:controller"),
  );
});

Deno.test("metallb objects: a manifest without the controller is refused", () => {
  assert.throws(
    () => metallbObjects("kind: Namespace\nmetadata: {name: x}\n", "i", "10.0.0.0/24"),
    /no controller Deployment/,
  );
});
