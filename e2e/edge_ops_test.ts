/**
 * Real Envoy 1.40 behind the standalone agent reading a config folder: hot reload under load,
 * Envoy NACKs, bad input, and the admin endpoints.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { Logger } from "../lib/log/mod.ts";
import { runStandalone, standaloneDefaults } from "../agent/edge/mod.ts";
import { request } from "./http_client.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { spawnLoad } from "./load_process.ts";
import { shortAnswers } from "../agent/dns/_test_utils.ts";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  serviceFor,
  startEchos,
  toYaml as yaml,
  waitFor,
} from "./harness.ts";

Deno.test("edge e2e: config folder — hot reload under load, NACK, bad input, admin", async (t) => {
  const echos = await startEchos("stable", "edited");
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-config-" });
  const base = [
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...serviceFor("stable", echos.stable, { clusterIP: "127.0.1.10" }),
    ...serviceFor("edited", echos.edited),
    httpRoute("stable", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["stable.example.com"],
      rules: [{ backendRefs: [{ name: "stable", port: 8080 }] }],
    }),
  ];
  await Deno.writeTextFile(`${dir}/base.yaml`, yaml(...base));
  const editedRoute = (i: number) =>
    httpRoute("edited", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["edited.example.com"],
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: `/v${i}` } }],
        filters: [{
          type: "RequestHeaderModifier",
          requestHeaderModifier: { set: [{ name: "x-edit", value: String(i) }] },
        }],
        backendRefs: [{ name: "edited", port: 8080 }],
      }],
    });
  await Deno.writeTextFile(`${dir}/edited.yaml`, yaml(editedRoute(0)));
  const logs: string[] = [];
  const agent = await runStandalone({
    ...standaloneDefaults,
    envoy: await ensurePeer("envoy"),
    config: dir,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "127.0.0.1:0",
    nodeId: "e2e-ops",
    logger: new Logger("agent", (l) => logs.push(l), "info"),
  });
  const admin = (path: string) => fetch(`http://${agent.admin.address}${path}`);
  try {
    await agent.waitReady(60000);
    await t.step("admin: /healthz, /readyz, /status, /debug/xds, /metrics", async () => {
      assertEquals((await (await admin("/healthz")).text()).trim(), "ok");
      const ready = await admin("/readyz");
      assertEquals(ready.status, 200, await ready.text());
      const status = await (await admin("/status")).json();
      assert(status.config.objects.some((o: { kind: string }) => o.kind === "HTTPRoute"));
      const xds = await (await admin("/debug/xds")).json();
      assert(
        JSON.stringify(xds.default.Listener).includes(`"port_value":${port}`) ||
          JSON.stringify(xds.default.Listener).includes(`"portValue":${port}`),
      );
      const metrics = await (await admin("/metrics")).text();
      assert(metrics.includes("aether_config_revisions_total"), metrics.slice(0, 500));
    });

    await t.step(
      "mesh DNS: a Service's clusterIP answers <svc>.<meshDomain> (real dig), edits visible",
      async () => {
        const dig = await ensurePeer("dig");
        const ask = async (name: string) => {
          const out = await new Deno.Command(dig, {
            args: [
              "@127.0.0.1",
              "-p",
              String(agent.dns!.port),
              "+short",
              "+time=2",
              "+tries=3",
              name,
              "A",
            ],
            stdout: "piped",
          }).output();
          return shortAnswers(new TextDecoder().decode(out.stdout)).join("\n");
        };
        assertEquals(await ask("stable.aether.internal"), "127.0.1.10");
        assertEquals(await ask("STABLE.Aether.Internal"), "127.0.1.10");
        const moved = base.map((o) =>
          o.kind === "Service" && o.metadata.name === "stable"
            ? { ...o, spec: { ...(o.spec as Record<string, unknown>), clusterIP: "127.0.1.11" } }
            : o
        );
        await Deno.writeTextFile(`${dir}/base.yaml`, yaml(...moved));
        await waitFor(
          "the new clusterIP",
          async () => (await ask("stable.aether.internal")) === "127.0.1.11",
        );
        await agent.waitReady(60000);
      },
    );

    await t.step("hot reload: 100 route edits under ≥200 req/s → 0 non-2xx", async () => {
      // The load runs in its own process, so the in-process agent's reloads cannot starve it.
      const load = await spawnLoad({ port, authorities: ["stable.example.com"] });
      try {
        for (let i = 1; i <= 100; i++) {
          await Deno.writeTextFile(`${dir}/edited.yaml`, yaml(editedRoute(i)));
          await waitFor(`edit ${i} served`, async () => {
            const r = await request({ port, authority: "edited.example.com", path: `/v${i}` });
            return r.status === 200 &&
              (r.json?.headers as Record<string, string>)?.["x-edit"] === String(i);
          }, 60000);
        }
      } catch (e) {
        await load.stop().catch(() => {});
        throw e;
      }
      const result = await load.stop();
      console.log(
        `hot reload: 100 edits in ${result.seconds.toFixed(1)} s, ${result.sent} requests (${
          result.rate.toFixed(0)
        } req/s), ${result.failed} non-2xx`,
      );
      assertEquals(result.failures, {});
      assert(result.rate >= 200, `load was only ${result.rate.toFixed(0)} req/s`);
    });

    await t.step(
      "bad input: invalid YAML, unknown kind, CRD violation → problems naming file/object/field; the rest serves",
      async () => {
        await Deno.writeTextFile(`${dir}/broken.yaml`, "kind: [unclosed\n");
        await Deno.writeTextFile(
          `${dir}/unknown.yaml`,
          yaml({
            apiVersion: "example.com/v1",
            kind: "Widget",
            metadata: { name: "w", namespace: "default" },
          }),
        );
        await Deno.writeTextFile(
          `${dir}/invalid-route.yaml`,
          yaml(httpRoute("invalid", {
            parentRefs: [{ name: "gw" }],
            rules: [{
              matches: [{ path: { type: "PathPrefix", value: "no-leading-slash" } }],
              backendRefs: [{ name: "stable", port: 8080 }],
            }],
          })),
        );
        await waitFor("problems reported", async () => {
          const s = await (await admin("/status")).json();
          return s.config.problems.length >= 3;
        });
        const status = await (await admin("/status")).json();
        const problems = status.config.problems as {
          source?: string;
          kind: string;
          name: string;
          field: string;
          message: string;
        }[];
        const text = JSON.stringify(problems);
        assert(
          problems.some((p) => p.source?.endsWith("broken.yaml") && /invalid YAML/.test(p.message)),
          text,
        );
        assert(
          problems.some((p) => p.kind === "Widget" && p.source?.endsWith("unknown.yaml")),
          text,
        );
        assert(
          problems.some((p) =>
            p.kind === "HTTPRoute" && p.name === "invalid" && p.field.includes("path") &&
            p.source?.endsWith("invalid-route.yaml")
          ),
          text,
        );
        const r = await request({ port, authority: "stable.example.com" });
        assertEquals(r.status, 200, "everything else keeps serving");
        assertEquals((await admin("/readyz")).status, 200);
        for (const f of ["broken", "unknown", "invalid-route"]) {
          await Deno.remove(`${dir}/${f}.yaml`);
        }
      },
    );

    await t.step(
      "NACK: Envoy rejects a config → error_detail in /status and /metrics, last good keeps serving, no re-push loop",
      async () => {
        // Valid RE2 that our validation accepts, but over Envoy's RE2 program-size limit (100): Envoy
        // rejects it. (Look-ahead and other non-RE2 syntax are caught earlier, as UnsupportedValue.)
        await Deno.writeTextFile(
          `${dir}/nack.yaml`,
          yaml(httpRoute("nack", {
            parentRefs: [{ name: "gw" }],
            hostnames: ["nack.example.com"],
            rules: [{
              matches: [{
                path: {
                  type: "RegularExpression",
                  value:
                    "/(alpha|beta|gamma|delta|epsilon|zeta|eta|theta|iota|kappa|lambda|mu){3,9}",
                },
              }],
              backendRefs: [{ name: "stable", port: 8080 }],
            }],
          })),
        );
        await waitFor(
          "a NACK",
          async () => (await (await admin("/status")).json()).lastNack !== null,
        );
        const status = await (await admin("/status")).json();
        assert(String(status.lastNack.errorDetail).length > 0, JSON.stringify(status.lastNack));
        assertEquals((await admin("/readyz")).status, 503);
        const metrics = await (await admin("/metrics")).text();
        assert(/aether_xds_nacks_total\{[^}]*\} [1-9]/.test(metrics), "NACK counted");
        const r = await request({ port, authority: "stable.example.com" });
        assertEquals(r.status, 200, "the last good config keeps serving");
        const pushes = () =>
          agent.metrics.render().split("\n").filter((l) => l.startsWith("aether_xds_pushes_total"))
            .map((l) => Number(l.split(" ").pop())).reduce((a, b) => a + b, 0);
        const before = pushes();
        await new Promise((r) => setTimeout(r, 1000));
        assertEquals(pushes(), before, "no re-push of the rejected version");
        await Deno.remove(`${dir}/nack.yaml`);
        await agent.waitReady(60000);
      },
    );
  } finally {
    await agent.close();
    await closeEchos(echos);
    await Deno.remove(dir, { recursive: true });
  }
});
