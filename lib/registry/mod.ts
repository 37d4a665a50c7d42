/**
 * The registry: the cross-cluster plane. Each cluster's registrar writes its exported Services,
 * their ready endpoints and producer routes into its own origin partition of an etcd; every
 * importer mirrors all origins and turns them into ServiceImports and EDS. See layout.ts for the
 * keys, origin_writer.ts for the writer's lease and fencing, mirror.ts for the importer's view.
 * @module
 */
export * from "./kv.ts";
export { EtcdKv, type EtcdKvOptions } from "./etcd_kv.ts";
export * from "./layout.ts";
export {
  type MirrorMetrics,
  mirrorMetrics,
  type OriginEntries,
  RegistryMirror,
  type RegistryMirrorOptions,
} from "./mirror.ts";
export {
  type AliveClaim,
  OriginWriter,
  type OriginWriterOptions,
  type WriterState,
} from "./origin_writer.ts";
