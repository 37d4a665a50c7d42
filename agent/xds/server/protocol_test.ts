/**
 * ADS protocol rules checked with a grpc-js client: nonces and versions, stale nonces, NACK
 * without re-push, make-before-break ordering, delta removals, reconnects, the unix socket and
 * malformed requests.
 */
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { Buffer } from "node:buffer";
import { Snapshot } from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";
import { adsPaths, type DiscoveryResponse } from "./service.ts";
import { node, opts, snapshot, withServer } from "./_ads_client_test_utils.ts";
import { listener, routeConfig } from "./_test_utils.ts";

Deno.test({
  name: "sotw: versions, ACK, stale nonce, NACK without re-push, new version pushed",
  ...opts,
  fn: () =>
    withServer(async ({ cache, server, sotw, metrics }) => {
      const v1 = snapshot("one");
      cache.setDefaultSnapshot(v1);
      const s = sotw();
      s.send({ node, type_url: TypeUrl.listener });
      const r1 = await s.next();
      assert.equal(r1.version_info, v1.typeVersion(TypeUrl.listener));
      assert.equal(r1.resources.length, 1);
      s.send({
        type_url: TypeUrl.listener,
        version_info: r1.version_info,
        response_nonce: r1.nonce,
      });
      await s.quiet();
      assert.equal(server.ackedVersion("n1", TypeUrl.listener), r1.version_info);

      // Named type: only what is subscribed.
      s.send({ type_url: TypeUrl.route, resource_names: ["r1", "missing"] });
      const rr = await s.next();
      assert.equal(rr.resources.length, 1);
      s.send({
        type_url: TypeUrl.route,
        resource_names: ["r1", "missing"],
        version_info: rr.version_info,
        response_nonce: rr.nonce,
      });

      const v2 = Snapshot.fromResources({
        listeners: [listener("l1", 10001, "r1")],
        routes: [routeConfig("r1", [{ prefix: "/", direct: "one" }])],
      });
      cache.setDefaultSnapshot(v2);
      const r2 = await s.next();
      assert.equal(r2.type_url, TypeUrl.listener);
      assert.equal(r2.version_info, v2.typeVersion(TypeUrl.listener));
      // Routes did not change: no RDS push.
      await s.quiet();
      // A stale nonce is ignored, even with an error.
      s.send({
        type_url: TypeUrl.listener,
        version_info: r1.version_info,
        response_nonce: r1.nonce,
        error_detail: { message: "stale" },
      });
      await s.quiet();
      assert.equal(server.lastNack("n1"), undefined);
      // NACK: recorded, counted, not re-pushed.
      s.send({
        type_url: TypeUrl.listener,
        version_info: r1.version_info,
        response_nonce: r2.nonce,
        error_detail: { code: 3, message: "bad listener" },
      });
      await s.quiet(300);
      const nack = server.lastNack("n1")!;
      assert.equal(nack.errorDetail, "bad listener");
      assert.equal(nack.version, r2.version_info);
      assert.equal(server.ackedVersion("n1", TypeUrl.listener), r1.version_info);
      assert.equal(
        metrics.counter("aether_xds_nacks_total", "").get({ type_url: TypeUrl.listener }),
        1,
      );
      // Only a new snapshot triggers the next push.
      const v3 = snapshot("one");
      cache.setDefaultSnapshot(v3);
      const r3 = await s.next();
      assert.equal(r3.version_info, v3.typeVersion(TypeUrl.listener));
      assert.ok(Number(r3.nonce) > Number(r2.nonce));
    }),
});

Deno.test({
  name: "sotw: make-before-break — CDS and EDS ACKed before LDS and RDS go out; ready event",
  ...opts,
  fn: () =>
    withServer(async ({ cache, server, sotw }) => {
      cache.setDefaultSnapshot(snapshot("one"));
      const ready: string[] = [];
      server.onReady("n1", (v) => ready.push(v));
      const s = sotw();
      const ack = (r: DiscoveryResponse, names?: string[]) =>
        s.send({
          type_url: r.type_url,
          version_info: r.version_info,
          response_nonce: r.nonce,
          resource_names: names,
        });
      s.send({ node, type_url: TypeUrl.cluster });
      s.send({ type_url: TypeUrl.listener });
      const cds = await s.next();
      assert.equal(cds.type_url, TypeUrl.cluster);
      await s.quiet(); // LDS waits for the CDS ACK
      s.send({ type_url: TypeUrl.endpoint, resource_names: ["c1"] });
      const eds = await s.next();
      assert.equal(eds.type_url, TypeUrl.endpoint);
      ack(cds);
      await s.quiet(); // still waiting for the EDS ACK
      ack(eds, ["c1"]);
      const lds = await s.next();
      assert.equal(lds.type_url, TypeUrl.listener);
      s.send({ type_url: TypeUrl.route, resource_names: ["r1"] });
      const rds = await s.next();
      assert.equal(rds.type_url, TypeUrl.route);
      assert.equal(server.isReady("n1"), false);
      ack(lds);
      ack(rds, ["r1"]);
      await s.quiet();
      assert.equal(server.isReady("n1"), true);
      assert.deepEqual(ready, [cache.getDefaultSnapshot()!.version]);
      // Reconnect with the same versions: nothing is re-sent.
      s.end();
      const t = sotw();
      t.send({ node, type_url: TypeUrl.cluster, version_info: cds.version_info });
      await t.quiet();
      assert.equal(server.ackedVersion("n1", TypeUrl.cluster), cds.version_info);
    }),
});

Deno.test({
  name: "delta: only changes are sent, removals in removed_resources, initial versions honoured",
  ...opts,
  fn: () =>
    withServer(async ({ cache, server, delta }) => {
      cache.setDefaultSnapshot(snapshot("one", ["c1", "c2"]));
      const d = delta();
      d.send({ node, type_url: TypeUrl.cluster });
      const r1 = await d.next();
      assert.deepEqual(r1.resources.map((r) => r.name).sort(), ["c1", "c2"]);
      d.send({ type_url: TypeUrl.cluster, response_nonce: r1.nonce });
      await d.quiet();
      assert.equal(server.ackedVersion("n1", TypeUrl.cluster), r1.system_version_info);
      cache.setDefaultSnapshot(snapshot("one", ["c1", "c3"]));
      const r2 = await d.next();
      assert.deepEqual(r2.resources.map((r) => r.name), ["c3"]);
      assert.deepEqual(r2.removed_resources, ["c2"]);
      d.send({ type_url: TypeUrl.cluster, response_nonce: r2.nonce });
      // A reconnecting client that has c1 at its current version gets only c3.
      d.end();
      const e = delta();
      const c1 = r1.resources.find((r) => r.name === "c1")!;
      e.send({ node, type_url: TypeUrl.cluster, initial_resource_versions: { c1: c1.version } });
      const r3 = await e.next();
      assert.deepEqual(r3.resources.map((r) => r.name), ["c3"]);
      e.send({ type_url: TypeUrl.cluster, response_nonce: r3.nonce });
      // Named subscriptions: subscribe, then unsubscribe.
      e.send({ type_url: TypeUrl.endpoint, resource_names_subscribe: ["c1"] });
      const r4 = await e.next();
      assert.deepEqual(r4.resources.map((r) => r.name), ["c1"]);
      e.send({ type_url: TypeUrl.endpoint, response_nonce: r4.nonce });
      e.send({ type_url: TypeUrl.endpoint, resource_names_unsubscribe: ["c1"] });
      await e.quiet();
      // A name that does not exist is announced once in removed_resources, then sent on arrival.
      e.send({ type_url: TypeUrl.endpoint, resource_names_subscribe: ["nope"] });
      const r5 = await e.next();
      assert.deepEqual([r5.resources, r5.removed_resources], [[], ["nope"]]);
      e.send({ type_url: TypeUrl.endpoint, response_nonce: r5.nonce });
      await e.quiet();
      cache.setDefaultSnapshot(snapshot("one", ["c1", "c3", "nope"]));
      const r6 = await e.next();
      assert.equal(r6.type_url, TypeUrl.cluster);
      const r7 = await e.next();
      assert.deepEqual(r7.resources.map((r) => r.name), ["nope"]);
    }),
});

Deno.test({
  name: "server: unix socket, malformed requests never crash it, close() ends streams",
  ...opts,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      await withServer(async ({ cache, client, sotw, metrics, server }) => {
        cache.setDefaultSnapshot(snapshot("one"));
        const garbage = client.makeBidiStreamRequest(
          adsPaths.sotw,
          (b: Buffer) => b,
          (b: Buffer) => b,
        );
        const failed = new Promise<grpc.ServiceError>((resolve) => garbage.on("error", resolve));
        garbage.write(Buffer.from([0x12, 0x05, 0x01])); // node: 5 bytes announced, 1 sent
        const err = await failed;
        assert.equal(err.code, grpc.status.INTERNAL);
        // A request without type_url is ignored; the server still answers a good one.
        const s = sotw();
        s.send({ node });
        s.send({ type_url: TypeUrl.cluster });
        const r = await s.next();
        assert.equal(r.type_url, TypeUrl.cluster);
        assert.match(metrics.render(), /aether_xds_streams 1/);
        // close() ends the open stream and the client sees its end.
        const ended = new Promise((resolve) => s.call.on("status", resolve));
        await server.close();
        await ended;
        assert.match(metrics.render(), /aether_xds_streams 0/);
      }, `${dir}/xds.sock`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
