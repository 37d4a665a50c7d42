/**
 * A real gRPC backend for end-to-end tests: every unary method of any service answers with JSON
 * naming the backend, the method path and the metadata it saw. Payloads are JSON bytes (gRPC does
 * not care about the message encoding).
 * @module
 */
import * as grpc from "@grpc/grpc-js";

const json = {
  serialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  deserialize: (b: Buffer) => JSON.parse(b.toString() || "{}"),
};

/** What the gRPC echo answers. */
export interface GrpcEchoReply {
  backend: string;
  path: string;
  metadata: Record<string, string>;
}

/** A running gRPC echo backend. */
export interface GrpcEcho {
  name: string;
  hostname: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a gRPC echo named `name` serving the given method paths (`/pkg.Service/Method`). */
export function startGrpcEcho(
  name: string,
  paths: string[],
  hostname = "127.0.0.1",
): Promise<GrpcEcho> {
  const server = new grpc.Server();
  const definition: Record<string, grpc.MethodDefinition<unknown, GrpcEchoReply>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const path of paths) {
    definition[path] = {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: json.serialize,
      requestDeserialize: json.deserialize,
      responseSerialize: json.serialize,
      responseDeserialize: json.deserialize,
    };
    handlers[path] = (
      call: grpc.ServerUnaryCall<unknown, GrpcEchoReply>,
      cb: grpc.sendUnaryData<GrpcEchoReply>,
    ) => {
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(call.metadata.getMap())) metadata[k] = String(v);
      cb(null, { backend: name, path, metadata });
    };
  }
  server.addService(definition, handlers);
  return new Promise((resolve, reject) => {
    server.bindAsync(`${hostname}:0`, grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) return reject(err);
      resolve({
        name,
        hostname,
        port,
        close: () => new Promise((r) => server.tryShutdown(() => r())),
      });
    });
  });
}

/** Calls `path` through `target` (host:port) with `:authority` = authority; returns the reply. */
export function callGrpc(
  target: string,
  authority: string,
  path: string,
  metadata: Record<string, string> = {},
): Promise<GrpcEchoReply> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
    "grpc.default_authority": authority,
  });
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(path, json.serialize, json.deserialize, {}, md, {
      deadline: Date.now() + 5000,
    }, (err, reply) => {
      client.close();
      if (err) reject(err);
      else resolve(reply as GrpcEchoReply);
    });
  });
}
