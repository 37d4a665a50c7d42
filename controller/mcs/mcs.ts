/**
 * The MCS controller of one cluster (runs inside the aether controller): it publishes the
 * cluster's valid ServiceExports (with their endpoints and producer routes, routes.ts) to its
 * registry origin, mirrors every origin, and keeps its
 * cluster's ServiceImports, their clusterset VIP Services and its ServiceExports' status equal
 * to the merge (plan.ts). Only the leader writes; every replica mirrors, so a new leader starts
 * warm. A registry away changes nothing in the cluster (the last imports keep serving).
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Counter, Gauge, Registry } from "../../lib/metrics/mod.ts";
import { type KubeClient, Reflector } from "../../lib/kube/mod.ts";
import {
  type ExportRecord,
  MCS_VERSION,
  parseExportRecord,
  vipServiceName,
} from "../../lib/mcs/mod.ts";
import {
  clusterId,
  mirrorMetrics,
  type Origin,
  originId,
  OriginWriter,
  type RegistryKv,
  RegistryMirror,
} from "../../lib/registry/mod.ts";
import { objectPath } from "../../lib/kube/mod.ts";
import { MANAGED_BY, type McsCondition, planMcs } from "./plan.ts";
import { MCS_KINDS, McsWriter, type Vip, withTransitionTimes } from "./writes.ts";
import { httpRouteReflector, plannedRouteEntries } from "./routes.ts";
import type { HTTPRouteShape } from "../../lib/mcs/mod.ts";

/** Options of the MCS controller. */
export interface McsControllerOptions {
  client: KubeClient;
  kv: RegistryKv;
  origin: Origin;
  /** This replica's name (the registry claim's writer). */
  identity: string;
  /** This cluster's SPIFFE trust domain: registry endpoints carry their SPIFFE ID. */
  trustDomain?: string;
  /** This cluster's east-west gateway (`<ip>:<port>`): published on every endpoint record. */
  eastWestGateway?: string;
  /** Lease TTL of the origin's keys (default 10 s). */
  ttlSeconds?: number;
  isLeader: () => boolean;
  logger: Logger;
  metrics: Registry;
  now?: () => Date;
}

// deno-lint-ignore no-explicit-any
type Obj = any;

const MANAGED_KEY = Object.keys(MANAGED_BY)[0];
const path = (spec: typeof MCS_KINDS.ServiceExport | { group: string }, plural: string) =>
  spec.group ? `/apis/${spec.group}/${MCS_VERSION}/${plural}` : `/api/v1/${plural}`;

/** Reads ServiceExports, Services and Namespaces; writes the registry and the cluster. */
export class McsController {
  readonly #o: McsControllerOptions;
  readonly #cluster: string;
  readonly #reflectors: Record<
    "exports" | "services" | "namespaces" | "imports" | "slices" | "pods",
    Reflector<Obj>
  >;
  /** This cluster's HTTPRoutes (producer routes); not awaited: its CRD may be missing. */
  readonly #routes: Reflector<HTTPRouteShape>;
  readonly #mirror: RegistryMirror;
  readonly #writes: McsWriter;
  #writer: OriginWriter | undefined;
  #pending: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> = Promise.resolve();
  #stopped = false;
  #lastError = "";
  readonly #gauges: {
    imports: Gauge;
    exports: Gauge;
    conflicts: Gauge;
    routes: Gauge;
    failures: Counter;
  };

  constructor(opts: McsControllerOptions) {
    this.#o = opts;
    this.#cluster = clusterId(opts.origin);
    const m = opts.metrics;
    const metrics = {
      events: m.counter("aether_mcs_watch_events_total", "MCS controller watch events, by kind."),
      lists: m.counter("aether_mcs_lists_total", "MCS controller full lists, by kind."),
      errors: m.counter("aether_mcs_watch_errors_total", "MCS controller failed lists/watches."),
    };
    const reflector = (kind: string, p: string, transform = (raw: Obj): Obj => raw) =>
      new Reflector<Obj>({
        client: opts.client,
        path: p,
        kind,
        transform,
        onChange: () => this.#schedule(),
        logger: opts.logger.child(kind),
        metrics,
      });
    this.#reflectors = {
      exports: reflector("ServiceExport", path(MCS_KINDS.ServiceExport, "serviceexports")),
      services: reflector("Service", "/api/v1/services"),
      namespaces: reflector("Namespace", "/api/v1/namespaces"),
      imports: reflector("ServiceImport", path(MCS_KINDS.ServiceImport, "serviceimports")),
      slices: reflector("EndpointSlice", "/apis/discovery.k8s.io/v1/endpointslices"),
      // Only who each pod is: its ServiceAccount names its SPIFFE ID.
      pods: reflector("Pod", "/api/v1/pods", (raw: Obj) => ({
        namespace: raw.metadata?.namespace ?? "",
        name: raw.metadata?.name ?? "",
        serviceAccount: raw.spec?.serviceAccountName ?? "default",
      })),
    };
    this.#routes = httpRouteReflector({
      client: opts.client,
      logger: opts.logger,
      metrics,
      onChange: () => this.#schedule(),
    });
    this.#mirror = new RegistryMirror({
      kv: opts.kv,
      logger: opts.logger.child("registry"),
      metrics: mirrorMetrics(m),
      onChange: () => this.#schedule(),
    });
    this.#writes = new McsWriter(opts.client);
    this.#gauges = {
      imports: m.gauge(
        "aether_mcs_service_imports",
        "ServiceImports this cluster keeps (every exported Service whose namespace is here).",
      ),
      exports: m.gauge("aether_mcs_service_exports", "This cluster's ServiceExports, by valid."),
      conflicts: m.gauge(
        "aether_mcs_export_conflicts",
        "This cluster's ServiceExports with Conflict=True (the exporting clusters disagree).",
      ),
      routes: m.gauge(
        "aether_mcs_producer_routes",
        "This cluster's producer routes of exported Services published in the registry.",
      ),
      failures: m.counter("aether_mcs_reconcile_errors_total", "Failed MCS reconciles (retried)."),
    };
  }

  /** Starts watching; resolves when the cluster's kinds have listed (the registry may lag). */
  async start(): Promise<void> {
    this.#mirror.start().catch(() => {});
    // An empty first list gives no onChange: plan again once it is in (stale records go).
    this.#routes.start().then(() => this.#schedule(), () => {});
    await Promise.all(Object.values(this.#reflectors).map((r) => r.start()));
    this.#schedule();
  }

  /** A new leadership term: re-apply everything once. */
  leadershipChanged(): void {
    this.#writes.reset();
    this.#schedule();
  }

  /** The registry's exports of every synced origin (malformed values are skipped). */
  registryExports(): ExportRecord[] {
    const out: ExportRecord[] = [];
    for (const o of this.#mirror.origins()) {
      for (const [rel, value] of o.entries) {
        if (!rel.startsWith("exports/")) continue;
        const r = parseExportRecord(value);
        if (r) out.push(r);
      }
    }
    return out;
  }

  /** For /status. */
  status(): Record<string, unknown> {
    return {
      cluster: this.#cluster,
      writer: this.#writer?.state ?? "idle",
      registryRevision: this.#mirror.revision,
      origins: this.#mirror.origins().map((o) => o.id),
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
    };
  }

  #schedule(): void {
    if (this.#stopped || this.#pending !== undefined) return;
    this.#pending = setTimeout(() => {
      this.#pending = undefined;
      this.#running = this.#running.then(() => this.#reconcile()).catch((e) => {
        this.#lastError = (e as Error).message;
        this.#gauges.failures.inc();
        this.#o.logger.warn("MCS reconcile failed; retrying", { error: this.#lastError });
        setTimeout(() => this.#schedule(), 1000);
      });
    }, 20);
  }

  async #reconcile(): Promise<void> {
    if (this.#stopped || !this.#o.isLeader()) {
      if (!this.#o.isLeader() && this.#writer) {
        await this.#writer.stop(); // keys stay for the next leader to re-bind
        this.#writer = undefined;
      }
      return;
    }
    const r = this.#reflectors;
    const plan = planMcs({
      cluster: this.#cluster,
      exports: r.exports.values(),
      services: r.services.values(),
      namespaces: new Set(r.namespaces.values().map((n: Obj) => n.metadata.name)),
      registry: this.registryExports(),
      slices: r.slices.values(),
      pods: new Map(r.pods.values().map((p: Obj) => [`${p.namespace}/${p.name}`, p])),
      trustDomain: this.#o.trustDomain,
      eastWestGateway: this.#o.eastWestGateway,
      vipServiceName,
    });
    const conditions = [...plan.exportConditions.values()];
    const is = (c: McsCondition[], type: string, status: string) =>
      c.some((x) => x.type === type && x.status === status);
    this.#gauges.imports.set(plan.imports.length);
    this.#gauges.exports.set(conditions.filter((c) => is(c, "Valid", "True")).length, {
      valid: "true",
    });
    this.#gauges.exports.set(conditions.filter((c) => is(c, "Valid", "False")).length, {
      valid: "false",
    });
    this.#gauges.conflicts.set(conditions.filter((c) => is(c, "Conflict", "True")).length);
    const routes = plannedRouteEntries({
      cluster: this.#cluster,
      published: plan.published,
      routes: this.#routes.synced ? this.#routes.values() : undefined,
      current: this.#mirror.origin(originId(this.#o.origin))?.entries ?? [],
    });
    for (const [key, value] of routes) plan.published.set(key, value);
    this.#gauges.routes.set(routes.size);
    this.#writer ??= new OriginWriter({
      kv: this.#o.kv,
      origin: this.#o.origin,
      writer: this.#o.identity,
      ttlSeconds: this.#o.ttlSeconds,
      logger: this.#o.logger.child("registrar"),
    });
    // The registry away must not hold up the cluster side: publish in the background.
    this.#writer.publish(plan.published).catch((e) => {
      this.#lastError = (e as Error).message;
      setTimeout(() => this.#schedule(), 2000);
    });
    const services = new Map(
      r.services.values().map((s: Obj) => [`${s.metadata.namespace}/${s.metadata.name}`, s]),
    );
    const keep = new Set<string>();
    const now = (this.#o.now?.() ?? new Date()).toISOString().replace(/\.\d+Z$/, "Z");
    const existing = new Map(
      r.imports.values().map((si: Obj) => [`${si.metadata.namespace}/${si.metadata.name}`, si]),
    );
    for (const imp of plan.imports) {
      keep.add(`${imp.namespace}/${imp.name}`);
      let vip: Vip | undefined;
      if (imp.vipService) {
        keep.add(`${imp.namespace}/${imp.vipService}`);
        const known = services.get(`${imp.namespace}/${imp.vipService}`)?.spec;
        vip = await this.#writes.applyVipService(
          imp,
          known?.clusterIPs && { ips: known.clusterIPs, ipFamilies: known.ipFamilies ?? [] },
        );
      }
      const prior = existing.get(`${imp.namespace}/${imp.name}`);
      const ready = imp.vipService && !vip
        ? {
          type: "Ready",
          status: "False" as const,
          reason: "IPFamilyNotSupported",
          message: `this cluster serves none of the IP families ${
            imp.merged.spec.ipFamilies.join(", ")
          } of the clusterset service`,
        }
        : imp.vipService && vip!.ips.length === 0
        ? {
          type: "Ready",
          status: "False" as const,
          reason: "Pending",
          message: "waiting for the clusterset VIP",
        }
        : {
          type: "Ready",
          status: "True" as const,
          reason: "Ready",
          message:
            `served from the clusterset registry; exported by ${imp.merged.clusters.length} ` +
            "cluster(s)",
        };
      await this.#writes.applyImport(
        imp,
        vip,
        withTransitionTimes(
          [ready],
          prior?.status?.conditions ?? [],
          now,
          prior?.metadata?.generation ?? 0,
        ),
      );
    }
    // What this controller made and the plan no longer has.
    for (const si of r.imports.values()) {
      const key = `${si.metadata.namespace}/${si.metadata.name}`;
      if (
        si.metadata.labels?.[MANAGED_KEY] !== MANAGED_BY[MANAGED_KEY as keyof typeof MANAGED_BY]
      ) continue;
      if (!keep.has(key)) {
        await this.#writes.delete(
          objectPath(MCS_KINDS.ServiceImport, MCS_VERSION, si.metadata.namespace, si.metadata.name),
        );
      }
    }
    for (const s of services.values()) {
      const key = `${s.metadata.namespace}/${s.metadata.name}`;
      if (s.metadata.labels?.[MANAGED_KEY] !== "aether-mcs" || keep.has(key)) continue;
      await this.#writes.delete(
        `/api/v1/namespaces/${s.metadata.namespace}/services/${s.metadata.name}`,
      );
    }
    for (const exp of r.exports.values()) {
      const key = `${exp.metadata.namespace}/${exp.metadata.name}`;
      const conditions = plan.exportConditions.get(key);
      if (!conditions) continue;
      await this.#writes.applyExportStatus(
        exp.metadata.namespace,
        exp.metadata.name,
        withTransitionTimes(
          conditions,
          exp.status?.conditions ?? [],
          now,
          exp.metadata.generation ?? 0,
        ),
      );
    }
    this.#lastError = "";
  }

  /** Stops watching; a leader's keys stay in the registry for its successor. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#pending !== undefined) clearTimeout(this.#pending);
    await this.#running.catch(() => {});
    this.#mirror.stop();
    await this.#writer?.stop();
    await Promise.all([...Object.values(this.#reflectors), this.#routes].map((r) => r.stop()));
  }
}
