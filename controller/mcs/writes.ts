/**
 * The MCS controller's writes to its own cluster (server-side apply as `aether-mcs`, only when
 * the applied content changed): clusterset VIP Services, ServiceImports and their status, and
 * ServiceExport status conditions with stable transition times.
 * @module
 */
import {
  errorOf,
  type KindSpec,
  type KubeClient,
  objectPath,
  OWNED_KINDS,
} from "../../lib/kube/mod.ts";
import { MCS_GROUP, MCS_VERSION, VIP_SERVICE_IMPORT_ANNOTATION } from "../../lib/mcs/mod.ts";
import {
  DERIVED_SERVICE,
  MANAGED_BY,
  type McsCondition,
  type PlannedImport,
  SERVICE_PROXY_NAME,
} from "./plan.ts";

/** The field manager of every MCS write. */
export const FIELD_MANAGER = "aether-mcs";

const mcsKind = (kind: string, plural: string): KindSpec => ({
  kind,
  group: MCS_GROUP,
  versions: [MCS_VERSION],
  plural,
  namespaced: true,
  crd: true,
});

/** ServiceExport and ServiceImport as the controller lists, watches and writes them. */
export const MCS_KINDS = {
  ServiceExport: mcsKind("ServiceExport", "serviceexports"),
  ServiceImport: mcsKind("ServiceImport", "serviceimports"),
};

/** A stable metav1.Condition list: a condition whose status is unchanged keeps its time. */
export function withTransitionTimes(
  next: McsCondition[],
  previous: { type?: string; status?: string; lastTransitionTime?: string }[],
  now: string,
  generation: number,
): Record<string, unknown>[] {
  return next.map((c) => {
    const old = previous.find((p) => p.type === c.type);
    return {
      ...c,
      observedGeneration: generation,
      lastTransitionTime: old?.status === c.status && old.lastTransitionTime
        ? old.lastTransitionTime
        : now,
    };
  });
}

/** Applies and deletes, remembering what it applied so an unchanged object is not re-sent. */
export class McsWriter {
  readonly #applied = new Map<string, string>();
  constructor(readonly client: KubeClient) {}

  /** Forgets what was applied (a new leadership term re-applies everything once). */
  reset(): void {
    this.#applied.clear();
  }

  /** Server-side apply of `body` at `path`; the answer, or undefined when nothing changed. */
  // deno-lint-ignore no-explicit-any
  async apply(path: string, body: Record<string, unknown>): Promise<any | undefined> {
    const text = JSON.stringify(body);
    if (this.#applied.get(path) === text) return undefined;
    const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, force: "true" });
    const res = await this.client.request(
      "PATCH",
      `${path}?${q}`,
      body,
      "application/apply-patch+yaml",
    );
    if (res.status !== 200 && res.status !== 201) throw errorOf(res, `applying ${path}`);
    this.#applied.set(path, text);
    return res.json;
  }

  /** Deletes one object (absent is fine). */
  async delete(path: string): Promise<void> {
    this.#applied.delete(path);
    this.#applied.delete(`${path}/status`);
    const res = await this.client.request("DELETE", path);
    if (res.status !== 200 && res.status !== 202 && res.status !== 404) {
      throw errorOf(res, `deleting ${path}`);
    }
  }

  /** The clusterset VIP Service of an import; returns its cluster IPs (known or new). */
  async applyVipService(imp: PlannedImport, known: string[]): Promise<string[]> {
    const ports = imp.merged.spec.ports.map((p) => ({
      name: p.name ?? `${p.protocol.toLowerCase()}-${p.port}`,
      protocol: p.protocol,
      port: p.port,
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    }));
    const families = imp.merged.spec.ipFamilies;
    const res = await this.apply(
      objectPath(OWNED_KINDS.Service, "v1", imp.namespace, imp.vipService!),
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: {
          name: imp.vipService,
          namespace: imp.namespace,
          labels: { ...MANAGED_BY, ...SERVICE_PROXY_NAME },
          annotations: { [VIP_SERVICE_IMPORT_ANNOTATION]: imp.name },
        },
        spec: {
          type: "ClusterIP",
          ports,
          ipFamilies: families,
          ipFamilyPolicy: families.length > 1 ? "PreferDualStack" : "SingleStack",
        },
      },
    );
    return res?.spec?.clusterIPs ?? known;
  }

  /**
   * The ServiceImport and its status: the exporting clusters, `Ready` (`conditions`: with their
   * transition times) and `endpointSliceObjects: Absent` — aether makes no MCS EndpointSlices,
   * its proxies read the endpoints from the registry (KEP-1645 allows it; v0.5.2 says so here).
   */
  async applyImport(
    imp: PlannedImport,
    ips: string[],
    conditions: Record<string, unknown>[],
  ): Promise<void> {
    const path = objectPath(MCS_KINDS.ServiceImport, MCS_VERSION, imp.namespace, imp.name);
    const head = {
      apiVersion: `${MCS_GROUP}/${MCS_VERSION}`,
      kind: "ServiceImport",
      metadata: {
        name: imp.name,
        namespace: imp.namespace,
        labels: { ...imp.merged.labels, ...MANAGED_BY },
        annotations: {
          ...imp.merged.annotations,
          ...(imp.vipService ? { [DERIVED_SERVICE]: imp.vipService } : {}),
        },
      },
    };
    await this.apply(path, { ...head, spec: { ...imp.merged.spec, ips } });
    await this.apply(`${path}/status`, {
      ...head,
      status: {
        clusters: imp.merged.clusters.map((cluster) => ({ cluster })),
        conditions,
        endpointSliceObjects: "Absent",
      },
    });
  }

  /** A ServiceExport's conditions. */
  async applyExportStatus(
    namespace: string,
    name: string,
    conditions: Record<string, unknown>[],
  ): Promise<void> {
    const path = objectPath(MCS_KINDS.ServiceExport, MCS_VERSION, namespace, name, true);
    await this.apply(path, {
      apiVersion: `${MCS_GROUP}/${MCS_VERSION}`,
      kind: "ServiceExport",
      metadata: { name, namespace },
      status: { conditions },
    });
  }
}
