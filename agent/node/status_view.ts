/**
 * What the node agent's `/status` says about objects. From files the node is the only one that
 * computes status, so it shows every object's. From the API server the controller writes the
 * status users read with kubectl (merged, one writer); the node's own computation could disagree
 * with it (the controller also knows edge readiness and addresses), so the node shows only its own
 * problems — what it could not serve — and a pointer to where object status lives.
 * @module
 */
import type { EngineStatus } from "../../lib/engine/mod.ts";

/** Where object status is read when the controller writes it. */
export const CONTROLLER_STATUS_POINTER =
  "object status is written by the controller to the API server: kubectl get gateways,httproutes,grpcroutes,tlsroutes -A -o yaml (status.conditions, status.parents[])";

/** The `/status` config part of a node agent. */
export type NodeConfigStatus = EngineStatus & {
  /** Set when object status is the controller's (the source is the API server). */
  objectStatus?: string;
};

/** The node's view: its own problems, and objects only when nothing else writes their status. */
export function nodeConfigStatus(
  status: EngineStatus,
  fromApiServer: boolean,
): NodeConfigStatus {
  if (!fromApiServer) return status;
  return { ...status, objects: [], objectStatus: CONTROLLER_STATUS_POINTER };
}
