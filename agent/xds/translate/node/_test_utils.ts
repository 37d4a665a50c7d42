/**
 * Test helpers for the node translator: golden cases (`{mesh, view, options?}` in
 * `testdata/<case>.in.yaml`) and the static bootstrap `envoy --mode validate` checks.
 * @module
 */
import { goldenCaseNames, readYamlStrict } from "../../../../testbed/golden.ts";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MeshIR, NodeView } from "../../../../lib/ir/mod.ts";
import { staticBootstrap } from "../_test_utils.ts";
import { internalListenerExtension } from "../../server/mod.ts";
import type { NodeResources, NodeTranslateOptions } from "./mod.ts";

/** The folder holding `<case>.in.yaml` / `<case>.out.yaml`. */
export const nodeTestdataDir: string = join(dirname(fileURLToPath(import.meta.url)), "testdata");

/** One golden case of the node translator. */
export interface NodeCase {
  name: string;
  mesh: MeshIR;
  view: NodeView;
  options?: NodeTranslateOptions;
}

/** Golden case names (sorted), each with its input. */
export function nodeGoldenCases(): NodeCase[] {
  return goldenCaseNames(nodeTestdataDir).map((name) => ({
    name,
    ...(readYamlStrict(join(nodeTestdataDir, `${name}.in.yaml`)) as Omit<NodeCase, "name">),
  }));
}

type Obj = Record<string, unknown>;

/** PEM material standing in for the SVIDs and bundles SDS serves at run time. */
export interface PlaceholderTls {
  ca: string;
  cert: string;
  key: string;
}

/**
 * `value` with every SDS reference of a TLS context inlined from `tls` (certificates and the
 * validation context's CA; SAN matchers kept): Envoy's validate mode cannot follow SDS over ADS.
 */
export function inlineSds(value: unknown, tls: PlaceholderTls): unknown {
  if (Array.isArray(value)) return value.map((v) => inlineSds(v, tls));
  if (typeof value !== "object" || value === null) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value as Obj)) {
    if (k === "tls_certificate_sds_secret_configs") {
      out.tls_certificates = (v as Obj[]).map(() => ({
        certificate_chain: { inline_string: tls.cert },
        private_key: { inline_string: tls.key },
      }));
    } else if (k === "combined_validation_context") {
      const def = ((v as Obj).default_validation_context ?? {}) as Obj;
      out.validation_context = { ...def, trusted_ca: { inline_string: tls.ca } };
    } else out[k] = inlineSds(v, tls);
  }
  return out;
}

/**
 * A static Bootstrap equivalent to node resources: the edge conversion (inline routes, STATIC
 * clusters for EDS ones) with each VHDS route table's virtual hosts inlined (a static route
 * config cannot use VHDS), clusters naming an EDS `service_name` given that target's endpoints,
 * plus an ADS config (to an unused static cluster) as a dynamic node's bootstrap has, and
 * (`internalListener`, default on) the internal-listener bootstrap extension.
 */
export function nodeStaticBootstrap(
  nr: NodeResources,
  tls?: PlaceholderTls,
  o: { internalListener?: boolean } = { internalListener: true },
): Obj {
  const routes = nr.routes.map(({ name, resource }) => {
    if (!resource.vhds) return { name, resource };
    const { vhds: _v, ...rest } = resource;
    const vhosts = nr.virtualHosts.filter((v) => v.name.startsWith(`${name}/`));
    return { name, resource: { ...rest, virtual_hosts: vhosts.map((v) => v.resource) } };
  });
  const { virtualHosts: _vh, ...r } = { ...nr, routes };
  const endpoints = new Map(r.endpoints.map((e) => [e.name, e.resource]));
  const aliasEndpoints = r.clusters.flatMap(({ name, resource }) => {
    const target = (resource.eds_cluster_config as Obj | undefined)?.service_name as string;
    const cla = target ? endpoints.get(target) : undefined;
    return cla ? [{ name, resource: { ...cla, cluster_name: name } }] : [];
  });
  const clusters = r.clusters.map(({ name, resource }) => {
    const { eds_cluster_config: eds, ...rest } = resource;
    const { service_name: _s, ...edsRest } = (eds ?? {}) as Obj;
    return { name, resource: eds ? { ...rest, eds_cluster_config: edsRest } : rest };
  });
  const bootstrap = staticBootstrap({
    ...r,
    clusters,
    endpoints: [...r.endpoints, ...aliasEndpoints],
  });
  const xds = {
    name: "aether_xds",
    type: 0,
    connect_timeout: { seconds: 1 },
    typed_extension_protocol_options: {
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
        "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
        explicit_http_config: { http2_protocol_options: {} },
      },
    },
    load_assignment: {
      cluster_name: "aether_xds",
      endpoints: [{
        lb_endpoints: [{
          endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: 1 } } },
        }],
      }],
    },
  };
  const statics =
    (tls ? inlineSds(bootstrap.static_resources, tls) : bootstrap.static_resources) as {
      listeners: Obj[];
      clusters: Obj[];
    };
  return {
    ...bootstrap,
    // As the node bootstrap has (unless it is an older one): internal listeners need it.
    ...(o.internalListener ? { bootstrap_extensions: [internalListenerExtension()] } : {}),
    static_resources: { ...statics, clusters: [...statics.clusters, xds] },
    dynamic_resources: {
      ads_config: {
        api_type: 3, // DELTA_GRPC
        transport_api_version: 2, // V3
        grpc_services: [{ envoy_grpc: { cluster_name: "aether_xds" } }],
      },
    },
  };
}
