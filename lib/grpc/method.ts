/**
 * Proto roots loaded from aether's `.proto` text and gRPC method descriptors for `@grpc/grpc-js`'s generic client from a protobufjs Root (pure): the
 * method's path and its request and response codecs. Messages decode with snake_case fields as
 * loaded (`keepCase`), 64-bit integers as numbers, bytes as Buffers and defaults filled in.
 * @module
 */
import protobuf from "protobufjs";
import { Buffer } from "node:buffer";
import { isAbsolute, join } from "node:path";

const { Root } = protobuf;

/** A method's gRPC path and message codecs. */
export interface GrpcMethod<Req, Res> {
  path: string;
  serialize(req: Req): Buffer;
  deserialize(bytes: Buffer): Res;
}

/** The descriptor of `service/method` (full service name) in `root`. */
export function grpcMethod<Req, Res>(
  root: protobuf.Root,
  service: string,
  method: string,
): GrpcMethod<Req, Res> {
  const m = root.lookupService(service).methods[method];
  if (!m) throw new Error(`${service} has no method ${method}`);
  m.resolve();
  const req = m.resolvedRequestType!, res = m.resolvedResponseType!;
  return {
    path: `/${service}/${method}`,
    serialize: (r) =>
      Buffer.from(req.encode(req.fromObject(r as Record<string, unknown>)).finish()),
    deserialize: (b) =>
      res.toObject(res.decode(b), {
        longs: Number,
        bytes: Buffer,
        defaults: true,
        arrays: true,
      }) as Res,
  };
}

/**
 * Loads `file` into a new Root whose imports resolve against `protoDir` (as `protoc -I
 * <protoDir>`; protobufjs would look beside the importing file), fields kept in snake_case.
 */
export function loadProtoRoot(protoDir: string, file: string): protobuf.Root {
  const root = new Root();
  root.resolvePath = (_origin, target) => isAbsolute(target) ? target : join(protoDir, target);
  root.loadSync(file, { keepCase: true });
  root.resolveAll();
  return root;
}
