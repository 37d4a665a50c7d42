/**
 * The on-demand hook: a delta client subscribing to names its snapshot lacks (Envoy's on-demand
 * CDS beside its wildcard CDS) makes the server ask `onDemand`; what the handler adds is sent,
 * what still does not exist is answered in removed_resources.
 */
import assert from "node:assert/strict";
import { TypeUrl } from "../proto.ts";
import { node, opts, snapshot, withServer } from "./_ads_client_test_utils.ts";
import type { OnDemandHandler } from "./mod.ts";

Deno.test({
  name:
    "delta on-demand: missing names go to onDemand (async), found ones are sent, others removed",
  ...opts,
  fn: async () => {
    const asked: [string, string, string[]][] = [];
    let grow: ((names: string[]) => void) | undefined;
    const onDemand: OnDemandHandler = async (nodeId, typeUrl, names) => {
      asked.push([nodeId, typeUrl, names]);
      await new Promise((r) => setTimeout(r, 50)); // the agent recomputes asynchronously
      grow?.(names);
    };
    await withServer(
      async ({ cache, delta }) => {
        cache.setSnapshot("n1", snapshot("one", ["c1"]));
        const have = new Set(["c1"]);
        grow = (names) => {
          for (const n of names) if (n.startsWith("svc")) have.add(n);
          cache.setSnapshot("n1", snapshot("one", [...have]));
        };
        const d = delta();
        d.send({ node, type_url: TypeUrl.cluster }); // wildcard, like Envoy's CDS
        const r1 = await d.next();
        assert.deepEqual(r1.resources.map((r) => r.name), ["c1"]);
        d.send({ type_url: TypeUrl.cluster, response_nonce: r1.nonce });
        await d.quiet();
        // ODCDS asks for one cluster that the handler can add and one it cannot.
        d.send({ type_url: TypeUrl.cluster, resource_names_subscribe: ["svc-9", "nope"] });
        const r2 = await d.next();
        assert.deepEqual(asked, [["n1", TypeUrl.cluster, ["nope", "svc-9"]]]);
        assert.deepEqual(r2.resources.map((r) => r.name), ["svc-9"]);
        assert.deepEqual(r2.removed_resources, [], "nothing announced missing while pending");
        d.send({ type_url: TypeUrl.cluster, response_nonce: r2.nonce });
        const r3 = await d.next();
        assert.deepEqual([r3.resources, r3.removed_resources], [[], ["nope"]]);
        d.send({ type_url: TypeUrl.cluster, response_nonce: r3.nonce });
        await d.quiet();
        // Asking again for a still-missing name asks the handler again and answers again.
        d.send({ type_url: TypeUrl.cluster, resource_names_subscribe: ["nope"] });
        const r4 = await d.next(1000);
        assert.deepEqual(r4.removed_resources, ["nope"]);
        assert.equal(asked.length, 2);
        // A name the snapshot has is not asked for.
        d.send({ type_url: TypeUrl.cluster, response_nonce: r4.nonce });
        d.send({ type_url: TypeUrl.cluster, resource_names_subscribe: ["c1"] });
        await d.quiet();
        assert.equal(asked.length, 2);
      },
      undefined,
      { onDemand },
    );
  },
});

Deno.test({
  name: "delta on-demand: a synchronous handler's snapshot is sent in the same turn",
  ...opts,
  fn: async () => {
    let add: (names: string[]) => void = () => {};
    await withServer(
      async ({ cache, delta }) => {
        cache.setSnapshot("n1", snapshot("one", ["c1"]));
        add = (names) => cache.setSnapshot("n1", snapshot("one", ["c1", ...names]));
        const d = delta();
        d.send({ node, type_url: TypeUrl.endpoint, resource_names_subscribe: ["c1", "c7"] });
        const r1 = await d.next();
        assert.deepEqual(r1.resources.map((r) => r.name).sort(), ["c1", "c7"]);
        assert.deepEqual(r1.removed_resources, []);
      },
      undefined,
      { onDemand: (_n, _t, names) => add(names) },
    );
  },
});

Deno.test({
  name: "delta without a handler: a missing name beside a wildcard is removed at once",
  ...opts,
  fn: () =>
    withServer(async ({ cache, delta }) => {
      cache.setSnapshot("n1", snapshot("one", ["c1"]));
      const d = delta();
      d.send({ node, type_url: TypeUrl.cluster, resource_names_subscribe: ["*", "c7"] });
      const r1 = await d.next();
      assert.deepEqual(r1.resources.map((r) => r.name), ["c1"]);
      assert.deepEqual(r1.removed_resources, ["c7"]);
    }),
});

Deno.test({
  name:
    "delta on-demand: a reconnecting client's initial_resource_versions are asked for, so a restarted agent keeps them",
  ...opts,
  fn: async () => {
    const asked: string[][] = [];
    let grow: OnDemandHandler | undefined;
    await withServer(
      async ({ cache, delta }) => {
        cache.setSnapshot("n1", snapshot("one", ["c1"]));
        const have = new Set(["c1"]);
        grow = (_node, _type, names) => {
          asked.push(names);
          for (const n of names) if (n.startsWith("svc")) have.add(n);
          cache.setSnapshot("n1", snapshot("one", [...have]));
        };
        const first = delta();
        first.send({ node, type_url: TypeUrl.cluster });
        const r1 = await first.next();
        const versions = Object.fromEntries(r1.resources.map((r) => [r.name, r.version]));
        // The client also holds svc-3, which this (restarted) server's snapshot lacks.
        const d = delta();
        d.send({
          node,
          type_url: TypeUrl.cluster,
          initial_resource_versions: { ...versions, "svc-3": "stale-version" },
        });
        const r2 = await d.next();
        assert.deepEqual(asked.at(-1), ["svc-3"]);
        assert.deepEqual(r2.removed_resources, [], "nothing the client holds is removed");
        assert.deepEqual(
          r2.resources.map((r) => r.name),
          ["svc-3"],
          "only the changed one is sent",
        );
      },
      undefined,
      { onDemand: (...a) => grow?.(...a) },
    );
  },
});

Deno.test({
  name:
    "delta on-demand: names a client holds when it connects before any snapshot are asked for once there is one, nothing removed meanwhile",
  ...opts,
  fn: async () => {
    const asked: string[][] = [];
    let grow: OnDemandHandler | undefined;
    await withServer(
      async ({ cache, delta }) => {
        // The handler knows the node only once its first snapshot exists (a starting agent).
        const have = new Set(["c1"]);
        grow = async (_node, _type, names) => {
          asked.push(names);
          await new Promise((r) => setTimeout(r, 50));
          for (const n of names) if (n.startsWith("svc")) have.add(n);
          cache.setSnapshot("n1", snapshot("one", [...have]));
        };
        const d = delta();
        d.send({
          node,
          type_url: TypeUrl.cluster,
          initial_resource_versions: { c1: "old", "svc-3": "old" },
        });
        await d.quiet();
        assert.deepEqual(asked, [], "nothing asked without a snapshot");
        cache.setSnapshot("n1", snapshot("one", ["c1"]));
        const r1 = await d.next();
        assert.deepEqual(asked, [["svc-3"]]);
        assert.deepEqual(r1.removed_resources, [], "svc-3 is pending, not removed");
        const names = new Set(r1.resources.map((r) => r.name));
        if (!names.has("svc-3")) {
          d.send({ type_url: TypeUrl.cluster, response_nonce: r1.nonce });
          const r2 = await d.next();
          assert.deepEqual(r2.removed_resources, []);
          for (const r of r2.resources) names.add(r.name);
        }
        assert.deepEqual([...names].sort(), ["c1", "svc-3"]);
      },
      undefined,
      { onDemand: (...a) => grow?.(...a) },
    );
  },
});
