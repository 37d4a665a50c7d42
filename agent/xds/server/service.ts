/**
 * The ADS gRPC service (`envoy.service.discovery.v3.AggregatedDiscoveryService`) as a hand-written
 * grpc-js ServiceDefinition whose (de)serializers are protobufjs types — no proto-loader.
 * @module
 */
import type { ServiceDefinition } from "@grpc/grpc-js";
import { Buffer } from "node:buffer";
import { messageType } from "../proto.ts";

/** A protobuf Any: type URL and encoded bytes. */
export interface Any {
  type_url: string;
  value: Uint8Array;
}

/** google.rpc.Status as carried in error_detail. */
export interface RpcStatus {
  code?: number;
  message?: string;
}

/** The fields of envoy.config.core.v3.Node we use. */
export interface NodeInfo {
  id?: string;
  cluster?: string;
  /** node.metadata (google.protobuf.Struct as protobufjs decodes it: `{ fields: { k: Value } }`). */
  metadata?: { fields?: Record<string, unknown> } | null;
}

/** envoy.service.discovery.v3.DiscoveryRequest (SotW). */
export interface DiscoveryRequest {
  version_info?: string;
  node?: NodeInfo | null;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: RpcStatus | null;
}

/** envoy.service.discovery.v3.DiscoveryResponse (SotW). */
export interface DiscoveryResponse {
  version_info: string;
  resources: Any[];
  type_url: string;
  nonce: string;
}

/** envoy.service.discovery.v3.DeltaDiscoveryRequest. */
export interface DeltaDiscoveryRequest {
  node?: NodeInfo | null;
  type_url?: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce?: string;
  error_detail?: RpcStatus | null;
}

/** One resource of a delta response. */
export interface DeltaResource {
  name: string;
  version: string;
  /** Absent in a VHDS "not found" answer to an alias. */
  resource?: Any;
  /** VHDS: the subscribed aliases (`<route config>/<host>`) this resource answers. */
  aliases?: string[];
}

/** envoy.service.discovery.v3.DeltaDiscoveryResponse. */
export interface DeltaDiscoveryResponse {
  system_version_info: string;
  resources: DeltaResource[];
  type_url: string;
  removed_resources: string[];
  nonce: string;
}

const pkg = "envoy.service.discovery.v3";

function codec<T>(typeName: string): {
  serialize: (value: T) => Buffer;
  deserialize: (bytes: Buffer) => T;
} {
  const type = messageType(`${pkg}.${typeName}`);
  return {
    serialize: (value) => Buffer.from(type.encode(type.fromObject(value as object)).finish()),
    deserialize: (bytes) => type.toObject(type.decode(bytes), { arrays: true, objects: true }) as T,
  };
}

/** The full gRPC method paths of ADS. */
export const adsPaths = {
  sotw: `/${pkg}.AggregatedDiscoveryService/StreamAggregatedResources`,
  delta: `/${pkg}.AggregatedDiscoveryService/DeltaAggregatedResources`,
} as const;

/** Builds the ADS service definition (protobufjs codecs, both bidirectional streams). */
export function adsService(): ServiceDefinition {
  const req = codec<DiscoveryRequest>("DiscoveryRequest");
  const res = codec<DiscoveryResponse>("DiscoveryResponse");
  const dreq = codec<DeltaDiscoveryRequest>("DeltaDiscoveryRequest");
  const dres = codec<DeltaDiscoveryResponse>("DeltaDiscoveryResponse");
  return {
    StreamAggregatedResources: {
      path: adsPaths.sotw,
      requestStream: true,
      responseStream: true,
      requestSerialize: req.serialize,
      requestDeserialize: req.deserialize,
      responseSerialize: res.serialize,
      responseDeserialize: res.deserialize,
      originalName: "streamAggregatedResources",
    },
    DeltaAggregatedResources: {
      path: adsPaths.delta,
      requestStream: true,
      responseStream: true,
      requestSerialize: dreq.serialize,
      requestDeserialize: dreq.deserialize,
      responseSerialize: dres.serialize,
      responseDeserialize: dres.deserialize,
      originalName: "deltaAggregatedResources",
    },
  };
}
