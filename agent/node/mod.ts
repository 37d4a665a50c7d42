/**
 * The node role: the node proxy for east-west (GAMMA) traffic, its demand-scoped per-node snapshots and its engine sink (docs/mesh.md).
 * @module
 */
export { type NodeAgent, type NodeAgentOptions, nodeDefaults, runNode } from "./run.ts";
export { NodeSnapshots } from "./snapshots.ts";
export { NodeMeshSink } from "./sink.ts";
