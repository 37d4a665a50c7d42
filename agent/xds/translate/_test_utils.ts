/**
 * Test helpers for the translator: golden cases, and the conversion of translated (xDS)
 * resources into a static Envoy bootstrap that `envoy --mode validate` can check.
 * @module
 */
import { stringify } from "yaml";
import { goldenCaseNames, readYamlStrict } from "../../../testbed/golden.ts";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IR } from "../../../lib/ir/mod.ts";
import { messageType, TypeUrl } from "../proto.ts";
import { DiscoveryType } from "./enums.ts";
import type { EnvoyResources, NamedResource } from "./mod.ts";

/** The folder holding `<case>.in.yaml` / `<case>.out.yaml`. */
export const testdataDir: string = join(dirname(fileURLToPath(import.meta.url)), "testdata");

/** Golden case names (sorted), each with its input IR. */
export function goldenCases(): { name: string; ir: IR }[] {
  return goldenCaseNames(testdataDir).map((name) => ({
    name,
    ir: readYamlStrict(join(testdataDir, `${name}.in.yaml`)) as IR,
  }));
}

/**
 * Stable YAML text for golden files (no line folding). With `aliases` false, an object reached
 * twice is written out in place each time (the edge's clusters of one protocol share their
 * read-only parts; the text shows the content, not the sharing).
 */
export function toYaml(value: unknown, aliases = true): string {
  return stringify(value, { aliasDuplicateObjects: aliases, lineWidth: 0 });
}

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const DOWNSTREAM_TLS = "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";

type Obj = Record<string, unknown>;

function byName(list: NamedResource[]): Map<string, Obj> {
  return new Map(list.map((r) => [r.name, r.resource]));
}

function must(map: Map<string, Obj>, name: string, what: string): Obj {
  const found = map.get(name);
  if (!found) throw new Error(`static bootstrap: no ${what} named ${name}`);
  return found;
}

function staticChain(chain: Obj, routes: Map<string, Obj>, secrets: Map<string, Obj>): Obj {
  const filters = (chain.filters as Obj[]).map((f) => {
    const tc = f.typed_config as Obj;
    if (!String(tc["@type"]).endsWith(HCM) || !tc.rds) return f;
    const { rds, ...hcm } = tc;
    const routeName = (rds as Obj).route_config_name as string;
    return { ...f, typed_config: { ...hcm, route_config: must(routes, routeName, "route") } };
  });
  const out: Obj = { ...chain, filters };
  const ts = chain.transport_socket as Obj | undefined;
  const sdsNames = ((ts?.typed_config as Obj | undefined)?.common_tls_context as Obj | undefined)
    ?.tls_certificate_sds_secret_configs as Obj[] | undefined;
  // Secrets the resources carry are inlined; others (node SVIDs, served at run time) stay SDS.
  const inline = sdsNames?.every((s) => secrets.has(s.name as string));
  if (ts && inline && String((ts.typed_config as Obj)["@type"]).endsWith(DOWNSTREAM_TLS)) {
    const tls = ts.typed_config as Obj;
    const { tls_certificate_sds_secret_configs: sds, ...common } = tls.common_tls_context as Obj;
    const certs = (sds as Obj[]).map((s) =>
      must(secrets, s.name as string, "secret").tls_certificate as Obj
    );
    out.transport_socket = {
      ...ts,
      typed_config: { ...tls, common_tls_context: { ...common, tls_certificates: certs } },
    };
  }
  return out;
}

/**
 * Route configurations with their VHDS virtual hosts inlined (`vhds` dropped), as a static
 * bootstrap needs them: static configs cannot use VHDS.
 */
export function inlineVirtualHosts(r: EnvoyResources): Map<string, Obj> {
  const hosts = new Map<string, Obj[]>();
  for (const { name, resource } of r.virtualHosts ?? []) {
    const rc = name.slice(0, name.lastIndexOf("/"));
    hosts.set(rc, [...(hosts.get(rc) ?? []), resource]);
  }
  return new Map(r.routes.map(({ name, resource }) => {
    const { vhds, ...rest } = resource;
    if (!vhds) return [name, resource];
    const { name: _, ...head } = rest;
    return [name, { name, virtual_hosts: hosts.get(name) ?? [], ...head }];
  }));
}

/**
 * A static Bootstrap equivalent to `r`: route configs inline (their VHDS virtual hosts too) in
 * place of RDS, STATIC clusters with their load assignment in place of EDS, inline certificates
 * in place of SDS.
 */
export function staticBootstrap(r: EnvoyResources): Obj {
  const routes = inlineVirtualHosts(r);
  const secrets = byName(r.secrets);
  const endpoints = byName(r.endpoints);
  const listeners = r.listeners.map(({ resource }) =>
    resource.filter_chains === undefined ? resource : {
      ...resource,
      filter_chains: (resource.filter_chains as Obj[]).map((c) => staticChain(c, routes, secrets)),
    }
  );
  const clusters = r.clusters.map(({ name, resource }) => {
    // STATIC and ORIGINAL_DST clusters stay as they are; EDS ones get their endpoints inline.
    if (resource.load_assignment || !resource.eds_cluster_config) return resource;
    const { eds_cluster_config: _eds, ...rest } = resource;
    return {
      ...rest,
      type: DiscoveryType.STATIC,
      load_assignment: must(endpoints, name, "endpoints"),
    };
  });
  return {
    node: { id: "translate-validate", cluster: "translate-validate" },
    static_resources: { listeners, clusters },
  };
}

/** Encodes a Bootstrap object to protobuf bytes (Envoy reads `-c x.pb` as binary). */
export function encodeBootstrap(bootstrap: Obj): Uint8Array {
  const type = messageType("envoy.config.bootstrap.v3.Bootstrap");
  const err = type.verify(bootstrap);
  if (err) throw new Error(`Bootstrap: ${err}`);
  return type.encode(type.fromObject(bootstrap)).finish();
}

/**
 * Runs `envoy --mode validate` on `bootstrap`; resolves with Envoy's output, rejects with it when
 * Envoy refuses the configuration.
 */
export async function envoyValidate(envoy: string, bootstrap: Obj): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "aether-translate-" });
  try {
    const file = join(dir, "bootstrap.pb");
    await Deno.writeFile(file, encodeBootstrap(bootstrap));
    const out = await new Deno.Command(envoy, {
      args: ["--mode", "validate", "-c", file, "--disable-hot-restart", "-l", "warning"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    if (!out.success) throw new Error(`envoy --mode validate failed (exit ${out.code}):\n${text}`);
    return text;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Each kind of a translation's resources with its type URL, in xDS order. */
export function resourcesByType(
  r: EnvoyResources,
): (readonly [string, readonly NamedResource[]])[] {
  return [
    [TypeUrl.listener, r.listeners],
    [TypeUrl.route, r.routes],
    [TypeUrl.cluster, r.clusters],
    [TypeUrl.endpoint, r.endpoints],
    [TypeUrl.secret, r.secrets],
    [TypeUrl.virtualHost, r.virtualHosts ?? []],
  ];
}
