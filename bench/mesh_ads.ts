/**
 * The two sides of the GAMMA push benchmarks (bench/mesh_push.ts, bench/xds_fanout.ts with
 * bench/xds_fanout_server.ts): the node role's control plane (NodeSnapshots → snapshot cache →
 * XdsServer, delta ADS over gRPC on loopback) and simulated node proxies, each one delta ADS
 * stream that subscribes and ACKs like Envoy.
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { SnapshotCache } from "../agent/xds/cache/mod.ts";
import { XdsServer } from "../agent/xds/server/mod.ts";
import {
  adsService,
  type DeltaDiscoveryRequest,
  type DeltaDiscoveryResponse,
} from "../agent/xds/server/mod.ts";
import { TypeUrl } from "../agent/xds/proto.ts";
import { NodeSnapshots } from "../agent/node/mod.ts";

/** A node role's control plane listening on 127.0.0.1:`port`. */
export interface MeshXds {
  snapshots: NodeSnapshots;
  server: XdsServer;
  port: number;
}

/** Starts NodeSnapshots → SnapshotCache → XdsServer (quiet logger) on a free loopback port. */
export async function startMeshXds(): Promise<MeshXds> {
  const cache = new SnapshotCache();
  const snapshots = new NodeSnapshots({ cache });
  const server = new XdsServer({
    cache,
    logger: new Logger("xds", () => {}, "error"),
    metrics: new Registry(),
    onDemand: snapshots.onDemand,
  });
  return { snapshots, server, port: await server.listen({ port: 0 }) };
}

/** One response a simulated node proxy received: when (performance.now()) and its type URL. */
export interface Received {
  at: number;
  type: string;
}

/** A delta ADS stream. */
export type AdsStream = grpc.ClientDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>;

/** A gRPC client of the ADS service. */
export type AdsClient = grpc.Client & Record<string, () => AdsStream>;

/** An ADS client of 127.0.0.1:`port` (64 MiB messages) with extra channel options. */
export function adsClient(port: number, options: grpc.ChannelOptions = {}): AdsClient {
  const Client = grpc.makeGenericClientConstructor(adsService(), "ADS");
  return new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": 64 << 20,
    ...options,
  }) as AdsClient;
}

/**
 * Opens node `node-<n>`'s stream as Envoy's node proxy would (pod namespace `ns-<n>`): CDS and
 * LDS wildcard, RDS `outbound.ns-<n>`, VHDS wildcard once the route table is in, EDS for every
 * cluster it is sent. ACKs every response and logs it in `log`.
 */
export function nodeStream(client: AdsClient, n: number, log: Received[]): AdsStream {
  const call = client.DeltaAggregatedResources();
  const node = { id: `node-${n}`, cluster: "bench" };
  let vhds = false;
  call.on("data", (res: DeltaDiscoveryResponse) => {
    log.push({ at: performance.now(), type: res.type_url });
    call.write({ type_url: res.type_url, response_nonce: res.nonce });
    if (res.type_url === TypeUrl.route && !vhds) {
      vhds = true; // like Envoy: VHDS opens with a wildcard subscription once RDS is in
      call.write({ node, type_url: TypeUrl.virtualHost, resource_names_subscribe: [] });
    }
    if (res.type_url === TypeUrl.cluster) {
      const names = res.resources.map((r) => r.name);
      if (names.length) {
        call.write({ node, type_url: TypeUrl.endpoint, resource_names_subscribe: names });
      }
    }
  });
  call.on("error", () => {});
  for (const type of [TypeUrl.cluster, TypeUrl.listener]) {
    call.write({ node, type_url: type, resource_names_subscribe: [] });
  }
  call.write({ node, type_url: TypeUrl.route, resource_names_subscribe: [`outbound.ns-${n}`] });
  return call;
}
