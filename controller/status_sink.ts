/**
 * The controller's engine sink: each resolved revision's computed statuses, through the edges'
 * readiness and addresses when the controller runs edges, planned against the objects the API
 * server holds and offered to the status writer (which writes only while this process leads).
 * @module
 */
import type { Resolved, Sink } from "../lib/engine/mod.ts";
import type { EdgeReconciler } from "./edge_reconcile.ts";
import { type PlannedStatuses, planStatus } from "./status_plan.ts";
import { ROUTE_KINDS } from "../lib/gatewayapi/mod.ts";
import type { StatusWriter } from "./status_writer.ts";

/** Options of {@link StatusSink}. */
export interface StatusSinkOptions {
  writer: StatusWriter;
  /** The per-Gateway edges (their Deployments, Services and addresses), when the controller runs them. */
  edges?: EdgeReconciler;
  /** Clock for condition transition times (default: wall clock). */
  now?: () => Date;
  /** Whether a controllerName is ours (edge or mesh). */
  isOurs: (controllerName: string) => boolean;
}

const iso = (d: Date) => d.toISOString().replace(/\.\d+Z$/, "Z");

/** Plans and offers status for every revision, as an engine sink named `status`. */
export class StatusSink implements Sink {
  readonly name = "status";
  #planned: PlannedStatuses = new WeakMap();

  constructor(readonly options: StatusSinkOptions) {}

  apply({ input, result }: Resolved): void {
    const o = this.options;
    const now = iso(o.now?.() ?? new Date());
    const statuses = o.edges ? o.edges.reconcile(input.objects, result.statuses) : result.statuses;
    o.writer.offer(planStatus(input.objects, statuses, now, o.isOurs, ROUTE_KINDS, this.#planned));
  }

  /** Plans every object again from the next revision on (a new leader term). */
  reset(): void {
    this.#planned = new WeakMap();
  }
}
