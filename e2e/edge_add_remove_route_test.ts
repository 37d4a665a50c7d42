/**
 * The add and remove paths (lib/gatewayapi/add_edit.ts, remove_edit.ts) through a real Envoy: a
 * new HTTPRoute for a new exact hostname is resolved on the last result — `/metrics` counts it as
 * `path="add"`, not as a cold resolve — and Envoy serves it, with the routes of the listener's
 * wildcard route that cover the new host still there under the new route's own (Gateway API
 * merges every route of a host into one virtual host); the Gateway's `attachedRoutes` and the
 * route's `Accepted` come from the same path. Deleting it (`path="remove"`) hands its host back to
 * the wildcard route, and `attachedRoutes` counts it out. A wildcard route added afterwards does
 * not qualify: it goes cold and serves as well.
 */
import assert from "node:assert/strict";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  serviceFor,
  startEchos,
  startEdge,
  waitFor,
} from "./harness.ts";
import { request } from "./http_client.ts";

interface Status {
  kind: string;
  name: string;
  status: Record<string, unknown>;
}
interface Condition {
  type: string;
  status: string;
  reason: string;
}

Deno.test("edge: a new route for a new host takes the add path, its deletion the remove path, both served through Envoy", async () => {
  const echos = await startEchos("app", "other", "wild");
  const port = freePort();
  const ref = (name: string) => ({ name, port: 8080 });
  const exact = (i: number) =>
    httpRoute(`host-${i}`, {
      parentRefs: [{ name: "gw" }],
      hostnames: [`host-${i}.example.com`],
      rules: [{ backendRefs: [ref("app")] }],
    });
  const edge = await startEdge([
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...serviceFor("app", echos.app),
    ...serviceFor("other", echos.other),
    ...serviceFor("wild", echos.wild),
    ...Array.from({ length: 20 }, (_, i) => exact(i)),
    // Covers every new *.example.com host: the add path must keep it under a new exact host.
    httpRoute("catch", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["*.example.com"],
      rules: [{ backendRefs: [ref("other")] }],
    }),
  ]);
  const get = async (authority: string, path = "/") => {
    const r = await request({ port, authority, path }).catch(() => null);
    return r?.status === 200 ? String(r.json?.backend) : `HTTP ${r?.status ?? "error"}`;
  };
  const resolves = async () => {
    const text = await (await fetch(`http://${edge.agent.admin.address}/metrics`)).text();
    const count = (path: string) =>
      Number(
        new RegExp(`^aether_resolves_total\\{path="${path}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0,
      );
    return { cold: count("cold"), add: count("add"), remove: count("remove") };
  };
  const statuses = async () =>
    ((await (await fetch(`http://${edge.agent.admin.address}/status`)).json()).config
      .objects) as Status[];
  try {
    assert.equal(await get("host-3.example.com"), "app");
    assert.equal(await get("new.example.com", "/api/x"), "other", "the wildcard route, before");
    const before = await resolves();

    const added = httpRoute("new", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["new.example.com"],
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: "/api" } }],
        backendRefs: [ref("app")],
      }],
    });
    await edge.apply(added);
    await waitFor(
      "new.example.com/api served by the new route",
      async () => await get("new.example.com", "/api/x") === "app",
    );
    assert.deepEqual(await resolves(), { ...before, add: before.add + 1 });
    assert.equal(
      await get("new.example.com", "/other"),
      "other",
      "the wildcard route's rule still serves the new host's other paths",
    );
    assert.equal(await get("host-3.example.com"), "app", "the other hosts are untouched");
    const shown = await statuses();
    const gw = shown.find((s) => s.kind === "Gateway" && s.name === "gw")!;
    const listeners = gw.status.listeners as { name: string; attachedRoutes: number }[];
    assert.equal(listeners[0].attachedRoutes, 22, "20 exact routes, the wildcard one, the new one");
    const route = shown.find((s) => s.kind === "HTTPRoute" && s.name === "new")!;
    const conditions = (route.status.parents as { conditions: Condition[] }[])[0].conditions;
    assert.equal(conditions.find((c) => c.type === "Accepted")?.status, "True");
    assert.equal(conditions.find((c) => c.type === "ResolvedRefs")?.status, "True");

    // Deleted: its host goes back to the wildcard route, on the remove path.
    edge.source.remove(added);
    await waitFor(
      "new.example.com/api served by the wildcard route again",
      async () => await get("new.example.com", "/api/x") === "other",
    );
    assert.deepEqual(await resolves(), { ...before, add: before.add + 1, remove: 1 });
    const after = await statuses();
    assert.ok(!after.some((s) => s.kind === "HTTPRoute" && s.name === "new"), "no status left");
    const gwAfter = after.find((s) => s.kind === "Gateway" && s.name === "gw")!;
    const counted = gwAfter.status.listeners as { attachedRoutes: number }[];
    assert.equal(counted[0].attachedRoutes, 21);

    // A wildcard hostname does not qualify for the add path: resolved cold, served all the same.
    await edge.apply(httpRoute("wild", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["*.wild.example.com"],
      rules: [{ backendRefs: [ref("wild")] }],
    }));
    await waitFor(
      "a.wild.example.com served",
      async () => await get("a.wild.example.com") === "wild",
    );
    assert.deepEqual(await resolves(), { cold: before.cold + 1, add: before.add + 1, remove: 1 });
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});
