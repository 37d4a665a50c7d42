/**
 * The check `deno task bench eg` runs before timing egctl: Envoy Gateway's offline translator
 * (`egctl x translate`) must turn a Gateway + HTTPRoute into xDS, or its timings mean nothing.
 * egctl is a benchmark peer only (not built by `deno task test`: it is a 7–8 min cold Go build).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { exec } from "../e2e/peers/proc.ts";

const input = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: default
spec:
  gatewayClassName: eg
  listeners:
    - name: http
      protocol: HTTP
      port: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  clusterIP: 10.96.0.10
  ports:
    - name: http
      port: 8080
      protocol: TCP
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
  namespace: default
spec:
  parentRefs:
    - name: edge
  hostnames:
    - shop.example.com
  rules:
    - matches:
        - path:
            type: PathPrefix
            value: /cart
      backendRefs:
        - name: web
          port: 8080
`;

/** Throws when `egctl x translate` does not produce the expected listener, route and cluster. */
export async function checkEgctl(egctl: string): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "aether-egctl-" });
  try {
    const file = join(dir, "in.yaml");
    await Deno.writeTextFile(file, input);
    const r = await exec(egctl, [
      "x",
      "translate",
      "--from",
      "gateway-api",
      "--to",
      "xds",
      "--type",
      "all",
      "--output",
      "json",
      "--file",
      file,
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const out = JSON.parse(r.stdout);
    const dump = out.xds["default/edge"];
    assert.ok(dump, `no xDS for default/edge in: ${Object.keys(out.xds ?? {})}`);
    const text = JSON.stringify(dump);
    const types = (dump.configs as { "@type": string }[]).map((c) => c["@type"].split(".").at(-1));
    for (const t of ["ListenersConfigDump", "RoutesConfigDump", "ClustersConfigDump"]) {
      assert.ok(types.includes(t), `missing ${t} in ${types}`);
    }
    // The listener on port 80 (Envoy Gateway maps it to 10080), a route for the host and prefix,
    // and the cluster for the HTTPRoute's rule.
    assert.match(text, /"name":"default\/edge\/http"/);
    assert.match(text, /"domains":\["shop\.example\.com"\]/);
    assert.match(text, /"prefix":"\/cart"|"pathSeparatedPrefix":"\/cart"/);
    assert.match(text, /"cluster":"httproute\/default\/shop\/rule\/0"/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
