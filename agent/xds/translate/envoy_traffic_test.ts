import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../../../testbed/peers/mod.ts";
import type { IR } from "../../../lib/ir/mod.ts";
import { translate } from "./mod.ts";
import { encodeBootstrap, goldenCases, staticBootstrap } from "./_test_utils.ts";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** The rewrites and redirects golden routes on one listener, backed by a local echo server. */
function trafficIR(listenPort: number, echoPort: number): IR {
  const cases = goldenCases();
  const routesOf = (name: string) => {
    const chain = cases.find((c) => c.name === name)!.ir.listeners[0].filterChains[0];
    assert.equal(chain.kind, "http");
    return chain.kind === "http" ? chain.virtualHosts[0].routes : [];
  };
  // The redirects (without their "/" catch-all) go first; "/full" is renamed so it does not
  // shadow the rewrite case of the same path.
  const redirects = routesOf("redirects")
    .filter((r) => r.match.path.value !== "/")
    .map((r) =>
      r.match.path.value === "/full"
        ? { ...r, match: { ...r.match, path: { ...r.match.path, value: "/full-redirect" } } }
        : r
    );
  const rewrites = routesOf("rewrites").map((r) =>
    r.action.kind === "forward" && r.action.rewrite?.path?.type === "ReplaceFullPath"
      ? {
        ...r,
        action: { ...r.action, rewrite: { path: { ...r.action.rewrite.path, value: "/one/two" } } },
      }
      : r
  );
  const name = `127.0.0.1:${listenPort}`;
  return {
    listeners: [{
      name,
      address: "127.0.0.1",
      port: listenPort,
      protocol: "HTTP",
      filterChains: [{
        kind: "http",
        name,
        serverNames: [],
        certificateSecrets: [],
        routeConfigName: "traffic",
        virtualHosts: [{ name: "*", domains: ["*"], routes: [...redirects, ...rewrites] }],
      }],
    }],
    clusters: [{
      name: "a.mesh.local",
      service: "default/a",
      port: 8080,
      protocol: "http1",
      endpoints: [{ address: "127.0.0.1", port: echoPort }],
    }],
    secrets: [],
  };
}

Deno.test("real Envoy 1.40 serves translated rewrites and redirects as Gateway API says", async () => {
  const envoy = await ensurePeer("envoy");
  const echo = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const u = new URL(req.url);
    return Response.json({ path: u.pathname + u.search, host: req.headers.get("host") });
  });
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-traffic-" });
  const file = join(dir, "bootstrap.pb");
  await Deno.writeFile(
    file,
    encodeBootstrap(staticBootstrap(translate(trafficIR(port, echo.addr.port)))),
  );
  const child = new Deno.Command(envoy, {
    args: ["-c", file, "--disable-hot-restart", "--concurrency", "1", "-l", "warning"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const base = `http://127.0.0.1:${port}`;
  const get = (path: string) => fetch(base + path, { redirect: "manual" });
  try {
    for (let i = 0; i < 600; i++) {
      try {
        await (await get("/exact")).body?.cancel();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const upstream: [string, string, string?][] = [
      ["/prefix/one", "/one", "h.example.com"],
      ["/prefix/one/two?x=1", "/one/two?x=1", "h.example.com"],
      ["/trailing", "/xyz"],
      ["/trailing/", "/xyz/"],
      ["/trailing/bar", "/xyz/bar"],
      ["/strip-prefix", "/"],
      ["/strip-prefix/", "/"],
      ["/strip-prefix/three", "/three"],
      ["/full/anything?q=1", "/one/two?q=1"],
      ["/exact", "/other"],
      ["/host/a", "/host/a", "internal.example.com"],
      ["/foo", "/api/foo"],
      ["/", "/api/"],
    ];
    for (const [path, want, host] of upstream) {
      const res = await get(path);
      assert.equal(res.status, 200, path);
      const body = await res.json();
      assert.equal(body.path, want, `${path} → upstream path`);
      if (host) assert.equal(body.host, host, `${path} → upstream host`);
    }
    const redirects: [string, number, string][] = [
      // The request's Host keeps its port (here the listener's), so a redirect without a
      // hostname spells out the resulting port; with a hostname, a well-known port is left out.
      ["/https/x", 301, "https://127.0.0.1:443/https/x"],
      ["/https-host/x", 301, "https://secure.example.com/https-host/x"],
      ["/http-port/x", 302, "http://other.example.com:8081/http-port/x"],
      ["/full-redirect/x", 303, `http://127.0.0.1:80/new/page`],
      ["/old-prefix/a/b", 307, `http://127.0.0.1:80/new-prefix/a/b`],
      ["/strip/a", 308, `http://127.0.0.1:80/a`],
      ["/strip", 308, `http://127.0.0.1:80/`],
    ];
    for (const [path, status, location] of redirects) {
      const res = await get(path);
      await res.body?.cancel();
      assert.equal(res.status, status, path);
      assert.equal(res.headers.get("location"), location, path);
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await echo.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
