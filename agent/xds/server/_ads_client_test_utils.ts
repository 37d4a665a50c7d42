/**
 * Test helpers for ADS protocol tests: an XdsServer with a grpc-js client, and a bidi stream
 * wrapper with a response queue.
 * @module
 */
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { Snapshot, SnapshotCache } from "../cache/mod.ts";
import { XdsServer, type XdsServerOptions } from "./mod.ts";
import { adsService } from "./service.ts";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "./service.ts";
import { edsCluster, endpoints, listener, routeConfig } from "./_test_utils.ts";

const Client = grpc.makeGenericClientConstructor(adsService(), "ADS");

/** A bidi stream with a response queue. */
export class Conversation<Req, Res> {
  #queue: Res[] = [];
  #waiters: ((r: Res) => void)[] = [];
  constructor(readonly call: grpc.ClientDuplexStream<Req, Res>) {
    call.on("data", (r: Res) => {
      const w = this.#waiters.shift();
      if (w) w(r);
      else this.#queue.push(r);
    });
    call.on("error", () => {});
  }
  send(req: Req): void {
    this.call.write(req);
  }
  next(ms = 2000): Promise<Res> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no response")), ms);
      this.#waiters.push((r) => {
        clearTimeout(timer);
        resolve(r);
      });
    });
  }
  /** Asserts nothing arrives within `ms`. */
  async quiet(ms = 150): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    assert.deepEqual(this.#queue, [], "unexpected response");
  }
  end(): void {
    this.call.end();
  }
}

export function snapshot(body: string, clusters = ["c1"]): Snapshot {
  return Snapshot.fromResources({
    listeners: [listener("l1", 10000, "r1")],
    routes: [routeConfig("r1", [{ prefix: "/", direct: body }])],
    clusters: clusters.map((c) => edsCluster(c)),
    endpoints: clusters.map((c) => endpoints(c, [9000])),
  });
}

export async function withServer(
  fn: (ctx: {
    cache: SnapshotCache;
    server: XdsServer;
    metrics: Registry;
    client: grpc.Client & Record<string, () => unknown>;
    sotw(): Conversation<DiscoveryRequest, DiscoveryResponse>;
    delta(): Conversation<DeltaDiscoveryRequest, DeltaDiscoveryResponse>;
  }) => Promise<void>,
  unixPath?: string,
  extra: Partial<XdsServerOptions> = {},
): Promise<void> {
  const cache = new SnapshotCache();
  const metrics = new Registry();
  const server = new XdsServer({ cache, metrics, logger: new Logger("xds", () => {}), ...extra });
  const port = await server.listen({ port: 0, unixPath });
  const target = unixPath ? `unix:${unixPath}` : `127.0.0.1:${port}`;
  const client = new Client(target, grpc.credentials.createInsecure()) as
    & grpc.Client
    & Record<string, () => unknown>;
  const calls: Conversation<unknown, unknown>[] = [];
  const open = <Req, Res>(method: string) => {
    const c = new Conversation<Req, Res>(client[method]() as grpc.ClientDuplexStream<Req, Res>);
    calls.push(c as Conversation<unknown, unknown>);
    return c;
  };
  try {
    await fn({
      cache,
      server,
      metrics,
      client,
      sotw: () => open("StreamAggregatedResources"),
      delta: () => open("DeltaAggregatedResources"),
    });
  } finally {
    for (const c of calls) c.end();
    client.close();
    await server.close();
  }
}

export const node = { id: "n1", cluster: "test" };
export const opts = { sanitizeOps: false, sanitizeResources: false };
