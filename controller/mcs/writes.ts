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
  type KubeResponse,
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

/** A clusterset VIP: its Service's cluster IPs, and their IP families in the same order. */
export interface Vip {
  ips: string[];
  ipFamilies: string[];
}

/**
 * The families of `asked` an API server's 422 answer to a Service names as not configured on its
 * cluster (`spec.ipFamilies[i]`: "not configured on this cluster"); none for any other refusal.
 */
export function unconfiguredFamilies(status: unknown, asked: readonly string[]): string[] {
  const causes = (status as { details?: { causes?: { field?: string; message?: string }[] } })
    ?.details?.causes ?? [];
  const out: string[] = [];
  for (const c of causes) {
    const i = Number(c.field?.match(/^spec\.ipFamilies\[(\d+)\]$/)?.[1] ?? NaN);
    if (asked[i] && c.message?.includes("not configured on this cluster")) out.push(asked[i]);
  }
  return out;
}

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
  /** IP families this cluster's API server refused for Services ("not configured"). */
  readonly #unsupported = new Set<string>();
  constructor(readonly client: KubeClient) {}

  /** Forgets what was applied and refused (a new leadership term re-applies everything once). */
  reset(): void {
    this.#applied.clear();
    this.#unsupported.clear();
  }

  /** Server-side apply of `body` at `path`; the answer, or undefined when nothing changed. */
  // deno-lint-ignore no-explicit-any
  async apply(path: string, body: Record<string, unknown>): Promise<any | undefined> {
    const res = await this.#send(path, body);
    if (res && res.status !== 200 && res.status !== 201) throw errorOf(res, `applying ${path}`);
    return res?.json;
  }

  /** Applies `body` unless it is what was last applied there; the API server's answer. */
  async #send(path: string, body: Record<string, unknown>): Promise<KubeResponse | undefined> {
    const text = JSON.stringify(body);
    if (this.#applied.get(path) === text) return undefined;
    const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, force: "true" });
    const res = await this.client.request(
      "PATCH",
      `${path}?${q}`,
      body,
      "application/apply-patch+yaml",
    );
    if (res.status === 200 || res.status === 201) this.#applied.set(path, text);
    return res;
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

  /**
   * The clusterset VIP Service of an import, in the import's IP families this cluster serves (in
   * their order; PreferDualStack for two): its cluster IPs and their families, pairwise in the same
   * order — the known ones when nothing changed, or undefined when this cluster serves none of the
   * families (no VIP Service then). A family the API server answers is "not configured on this
   * cluster" is left out from then on (until `reset`), so a dual-stack export is imported by a
   * single-stack cluster in the family it has.
   */
  async applyVipService(imp: PlannedImport, known?: Vip): Promise<Vip | undefined> {
    const ports = imp.merged.spec.ports.map((p) => ({
      name: p.name ?? `${p.protocol.toLowerCase()}-${p.port}`,
      protocol: p.protocol,
      port: p.port,
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    }));
    const path = objectPath(OWNED_KINDS.Service, "v1", imp.namespace, imp.vipService!);
    for (;;) {
      const families = imp.merged.spec.ipFamilies.filter((f) => !this.#unsupported.has(f));
      if (families.length === 0) return undefined;
      const res = await this.#send(path, {
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
      });
      if (!res) return known ?? { ips: [], ipFamilies: families };
      if (res.status === 200 || res.status === 201) {
        return {
          ips: res.json?.spec?.clusterIPs ?? [],
          ipFamilies: res.json?.spec?.ipFamilies ?? [],
        };
      }
      const missing = res.status === 422 ? unconfiguredFamilies(res.json, families) : [];
      if (missing.length === 0) throw errorOf(res, `applying ${path}`);
      for (const f of missing) this.#unsupported.add(f);
    }
  }

  /**
   * The ServiceImport and its status: the exporting clusters, `Ready` (`conditions`: with their
   * transition times) and `endpointSliceObjects: Absent` — aether makes no MCS EndpointSlices,
   * its proxies read the endpoints from the registry (KEP-1645 allows it; v0.5.2 says so here).
   */
  async applyImport(
    imp: PlannedImport,
    vip: Vip | undefined,
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
    // A VIP's families are the import's: `ips[i]` is of family `ipFamilies[i]` (mcs-api).
    const spec = vip && vip.ips.length > 0
      ? { ...imp.merged.spec, ipFamilies: vip.ipFamilies, ips: vip.ips }
      : { ...imp.merged.spec, ips: [] };
    await this.apply(path, { ...head, spec });
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
