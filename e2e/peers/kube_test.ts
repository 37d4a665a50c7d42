/**
 * Kubernetes smoke test: etcd + kube-apiserver, the Gateway API v1.5.1 CRDs installed, an HTTPRoute
 * read back with the CRD defaults applied, an invalid one rejected by a CEL rule, and the compiled
 * Gateway API conformance suite running against this API server until its setup has applied the
 * base manifests (nothing reconciles Gateways yet, so it goes no further).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { collection, installCrds, type Kube, startKube } from "./kube.ts";
import { dumpOutput, exec, type Proc, spawn, waitFor } from "./proc.ts";

const GW = "gateway.networking.k8s.io";

function httpRoute(name: string, rules: unknown[]): Record<string, unknown> {
  return {
    apiVersion: `${GW}/v1`,
    kind: "HTTPRoute",
    metadata: { name, namespace: "default" },
    spec: { parentRefs: [{ name: "edge" }], rules },
  };
}

const routes = `/apis/${GW}/v1/namespaces/default/httproutes`;

Deno.test("kube-apiserver: Gateway API v1.5.1 CRDs default and validate; conformance starts", async (t) => {
  const crdDir = await ensurePeer("gateway-api-crds");
  const conformance = await ensurePeer("gateway-conformance");
  const dir = await Deno.makeTempDir({ prefix: "aether-kube-" });
  let kube: Kube | undefined;
  const extra: Proc[] = [];
  try {
    kube = await startKube(dir);
    const k = kube;
    const version = await k.request("GET", "/version");
    assert.equal(version.json.gitVersion, "v1.37.2");

    await t.step("CRDs install (standard channel; experimental is there too)", async () => {
      const experimental = [...Deno.readDirSync(join(crdDir, "experimental"))].map((e) => e.name);
      assert.ok(experimental.includes("gateway.networking.x-k8s.io_xmeshes.yaml"));
      const crds = await installCrds(k, join(crdDir, "standard"));
      assert.ok(crds.includes(`httproutes.${GW}`), crds.join(","));
      const crd = await k.request("GET", `${collection.CustomResourceDefinition}/httproutes.${GW}`);
      assert.equal(crd.json.metadata.annotations[`${GW}/bundle-version`], "v1.5.1");
      assert.equal(crd.json.metadata.annotations[`${GW}/channel`], "standard");
    });

    await t.step("an HTTPRoute is read back with the CRD defaults applied", async () => {
      // The "default" namespace appears shortly after /readyz; retry until it does.
      const created = await waitFor(
        "HTTPRoute created",
        async () => {
          const res = await k.request(
            "POST",
            routes,
            httpRoute("defaults", [
              { backendRefs: [{ name: "web", port: 8080 }] },
            ]),
          );
          return res.status === 201 ? res : undefined;
        },
        60_000,
        k.procs,
      );
      assert.equal(created.status, 201);
      const got = (await k.request("GET", `${routes}/defaults`)).json;
      assert.deepEqual(got.spec.parentRefs[0], { group: GW, kind: "Gateway", name: "edge" });
      assert.deepEqual(got.spec.rules[0].matches, [{ path: { type: "PathPrefix", value: "/" } }]);
      assert.deepEqual(got.spec.rules[0].backendRefs[0], {
        group: "",
        kind: "Service",
        name: "web",
        port: 8080,
        weight: 1,
      });
    });

    await t.step("an invalid HTTPRoute is rejected by the CRD's CEL validation", async () => {
      const res = await k.request(
        "POST",
        routes,
        httpRoute("relative-path", [
          { matches: [{ path: { type: "PathPrefix", value: "no-leading-slash" } }] },
        ]),
      );
      assert.equal(res.status, 422, JSON.stringify(res.json));
      assert.equal(res.json.reason, "Invalid");
      assert.match(res.json.message, /value must be an absolute path and start with '\/'/);
      const missing = await k.request("GET", `${routes}/relative-path`);
      assert.equal(missing.status, 404);
    });

    await t.step("the conformance suite lists its tests", async () => {
      const r = await exec(conformance, ["-test.list", ".*"]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split("\n"), ["TestConformance"]);
    });

    await t.step("the conformance suite runs against this API server", async () => {
      // Stand in for a controller: a GatewayClass with Accepted=True lets the suite's setup go on
      // to apply its base manifests; it then waits for Gateways and pods that nothing provides.
      const gwc = `/apis/${GW}/v1/gatewayclasses`;
      const made = await k.request("POST", gwc, {
        apiVersion: `${GW}/v1`,
        kind: "GatewayClass",
        metadata: { name: "aether-conformance" },
        spec: { controllerName: "gateway.aether.io/conformance-smoke" },
      });
      assert.equal(made.status, 201, JSON.stringify(made.json));
      const status = await k.request("PATCH", `${gwc}/aether-conformance/status`, {
        status: {
          conditions: [{
            type: "Accepted",
            status: "True",
            reason: "Accepted",
            message: "smoke test",
            observedGeneration: 1,
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
          }],
        },
      });
      assert.equal(status.status, 200, JSON.stringify(status.json));
      const suite = spawn("gateway-conformance", conformance, [
        "-test.run=TestConformance",
        "-test.v",
        `-kubeconfig=${k.kubeconfig}`,
        "-gateway-class=aether-conformance",
        "-run-test=HTTPRouteSimpleSameNamespace",
        "-cleanup-base-resources=false",
      ], dir);
      extra.push(suite);
      await waitFor(
        "the suite's base manifests in the API server",
        async () => {
          const gw = await k.request(
            "GET",
            `/apis/${GW}/v1/namespaces/gateway-conformance-infra/gateways/same-namespace`,
          );
          return gw.status === 200 ? true : undefined;
        },
        90_000,
        [suite, ...k.procs],
      );
      const out = suite.output();
      assert.match(out, /Test Setup: Ensuring GatewayClass has been accepted/, dumpOutput([suite]));
      assert.match(out, /Test Setup: Applying base manifests/, dumpOutput([suite]));
    });
  } finally {
    for (const p of extra) await p.stop();
    await kube?.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
