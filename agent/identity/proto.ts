/**
 * The SPIFFE Workload API and SPIRE Delegated Identity API messages, loaded with protobufjs from
 * aether's own `.proto` text in `proto/` (one Root per call of {@link identityRoot}; callers keep
 * it), and gRPC method descriptors for `@grpc/grpc-js`'s generic client.
 * @module
 */
import protobuf from "protobufjs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Buffer } from "node:buffer";
import { type GrpcMethod, grpcMethod, loadProtoRoot } from "../../lib/grpc/method.ts";

const protoDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "proto");

/** The proto files, by API. */
export const protoFiles = {
  workload: join(protoDir, "spiffe", "workload.proto"),
  delegated: join(protoDir, "spire", "delegated_identity.proto"),
} as const;

/**
 * A loaded root with one API's messages. One root per file: both define an `X509SVID`, and a
 * shared root resolves the package-less Workload API one for both.
 */
export function identityRoot(api: keyof typeof protoFiles): protobuf.Root {
  return loadProtoRoot(protoDir, protoFiles[api]);
}

/** A server-streaming method: its gRPC path and message codecs. */
export type StreamMethod<Req, Res> = GrpcMethod<Req, Res>;

/** Builds the descriptor of `service/method` (full service name) from `root`. */
export const streamMethod = grpcMethod;

/** Workload API messages as decoded (snake_case, bytes as Buffer). */
export interface X509SvidResponse {
  svids: { spiffe_id: string; x509_svid: Buffer; x509_svid_key: Buffer; bundle: Buffer }[];
  federated_bundles: Record<string, Buffer>;
}

/** Delegated Identity API: one SVID with its key. */
export interface DelegatedSvid {
  x509_svid: {
    cert_chain: Buffer[];
    id: { trust_domain: string; path: string } | null;
    expires_at: number;
    hint: string;
  } | null;
  x509_svid_key: Buffer;
}

/** Delegated Identity API: a SubscribeToX509SVIDs message. */
export interface DelegatedSvidsResponse {
  x509_svids: DelegatedSvid[];
  federates_with: string[];
}

/** Delegated Identity API: a SubscribeToX509Bundles message (by trust domain name). */
export interface DelegatedBundlesResponse {
  ca_certificates: Record<string, Buffer>;
}

/** A workload selector, e.g. `{ type: "k8s", value: "ns:default" }`. */
export interface Selector {
  type: string;
  value: string;
}
