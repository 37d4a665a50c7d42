/**
 * Keeps one edge (controller/edge.ts) per Gateway of ours: applies the Deployment and Service when
 * what it would apply changed, deletes the edges of Gateways that are gone (also those left by an
 * earlier run, found by label among the Services the source watches), and lays each Service's
 * LoadBalancer addresses into its Gateway's status. Applies run in the background, one at a time,
 * only while this process leads.
 * @module
 */
import type { ObjectStatus } from "../lib/gatewayapi/mod.ts";
import type { Logger } from "../lib/log/mod.ts";
import type { Registry } from "../lib/metrics/mod.ts";
import { applyObject, deleteObject, type KubeClient, type Manifest } from "../lib/kube/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import {
  edgeName,
  type EdgeOptions,
  edgeResources,
  GATEWAY_LABEL,
  loadBalancerAddresses,
  withEdgeAddresses,
} from "./edge.ts";

/** Options of EdgeReconciler. */
export interface EdgeReconcilerOptions {
  client: KubeClient;
  options: EdgeOptions;
  logger: Logger;
  metrics: Registry;
  isLeader: () => boolean;
}

const FIELD_MANAGER = "aether-controller";

/** Services in `ns` with a ready endpoint in one of their EndpointSlices. */
export function readyServices(objects: readonly SourceObject[], ns: string): Set<string> {
  const out = new Set<string>();
  for (const o of objects) {
    if (o.kind !== "EndpointSlice" || o.metadata.namespace !== ns) continue;
    const svc = (o.metadata.labels as Record<string, string> | undefined)?.[
      "kubernetes.io/service-name"
    ];
    const endpoints = (o as { endpoints?: { conditions?: { ready?: boolean } }[] }).endpoints;
    if (svc && endpoints?.some((e) => e.conditions?.ready !== false)) out.add(svc);
  }
  return out;
}

/** Applies and deletes edges; adds their addresses to Gateway statuses. */
export class EdgeReconciler {
  /** What was last applied, by `Kind/name`. */
  readonly #applied = new Map<string, string>();
  #chain: Promise<void> = Promise.resolve();
  #stopped = false;
  readonly #ops;

  constructor(readonly o: EdgeReconcilerOptions) {
    this.#ops = o.metrics.counter(
      "aether_controller_edge_operations_total",
      "Edge Deployment/Service applies and deletes, by kind, op and result.",
    );
  }

  /** Forgets what was applied (a new leader term re-applies once). */
  reset(): void {
    this.#applied.clear();
  }

  /** Waits for the operation in flight and stops. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#chain;
  }

  /** Reconciles edges for this source revision; returns the statuses with Gateway addresses from them. */
  reconcile(objects: readonly SourceObject[], statuses: readonly ObjectStatus[]): ObjectStatus[] {
    const ns = this.o.options.namespace;
    const services = new Map<string, SourceObject>();
    for (const o of objects) {
      if (o.kind === "Service" && o.metadata.namespace === ns) services.set(o.metadata.name, o);
    }
    const ready = readyServices(objects, ns);
    const gateways = new Map<string, SourceObject>(), classes = new Map<string, SourceObject>();
    for (const o of objects) {
      if (o.kind === "Gateway") gateways.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
      if (o.kind === "GatewayClass") classes.set(o.metadata.name, o);
    }
    const wanted = new Set<string>();
    const out = statuses.map((s) => {
      if (s.kind !== "Gateway") return s;
      const gw = gateways.get(`${s.namespace}/${s.name}`);
      if (!gw) return s;
      const name = edgeName(s.namespace ?? "default", s.name);
      wanted.add(name);
      this.#applied.delete(`delete/${name}`);
      if (this.o.isLeader()) {
        const className = (gw.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName;
        const owner = className === undefined ? undefined : classes.get(className);
        for (const m of edgeResources(gw, this.o.options, owner)) this.#apply(m);
      }
      const addresses = loadBalancerAddresses(services.get(name));
      const status = withEdgeAddresses(s.status, addresses, `${ns}/${name}`, ready.has(name));
      return { ...s, status };
    });
    if (this.o.isLeader()) {
      for (const svc of services.values()) {
        const name = svc.metadata.name;
        const labels = (svc.metadata.labels ?? {}) as Record<string, string>;
        if (labels[GATEWAY_LABEL] && !wanted.has(name)) this.#delete(name);
      }
    }
    return out;
  }

  #enqueue(what: string, kind: string, op: string, f: () => Promise<void>, onFail: () => void) {
    this.#chain = this.#chain.then(async () => {
      if (this.#stopped || !this.o.isLeader()) return onFail();
      try {
        await f();
        this.#ops.inc({ kind, op, result: "ok" });
        this.o.logger.info(`edge ${op}`, { object: what });
      } catch (e) {
        onFail();
        this.#ops.inc({ kind, op, result: "error" });
        this.o.logger.warn(`edge ${op} failed; retried on the next source revision`, {
          object: what,
          error: (e as Error).message,
        });
      }
    });
  }

  #apply(m: Manifest): void {
    const key = `${m.kind}/${m.metadata.name}`;
    const body = JSON.stringify(m);
    if (this.#applied.get(key) === body) return;
    this.#applied.set(key, body);
    this.#enqueue(key, m.kind, "apply", () => applyObject(this.o.client, m, FIELD_MANAGER), () => {
      if (this.#applied.get(key) === body) this.#applied.delete(key);
    });
  }

  #delete(name: string): void {
    const key = `delete/${name}`;
    if (this.#applied.has(key)) return;
    this.#applied.set(key, "");
    for (const kind of ["Deployment", "Service"]) {
      this.#applied.delete(`${kind}/${name}`);
      this.#enqueue(
        `${kind}/${name}`,
        kind,
        "delete",
        () => deleteObject(this.o.client, kind, this.o.options.namespace, name),
        () => this.#applied.delete(key),
      );
    }
  }
}
