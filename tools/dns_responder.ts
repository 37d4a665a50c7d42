/**
 * The mesh DNS responder (agent/dns/) as a process of its own, for the network-namespace tests,
 * the DNS benchmark (bench/dns.ts) and manual use; not part of the agent or its image:
 *
 * ```sh
 * deno run -A tools/dns_responder.ts --dns-address 127.0.0.1:18054 --mesh-domain aether.internal \
 *   --record web=10.96.0.10,fd00::10 --records-file services.json --upstream 127.0.0.53:53
 * ```
 *
 * `--record name=ip[,ip…]` (name relative to the mesh domain, repeatable); `--records-file` holds a
 * JSON array of Kubernetes Services (or a `{items: [...]}` list), resolved like the agent does; `--upstream` is repeatable and
 * replaces resolv.conf; `--rate-limit-qps 0` disables the per-source limit. Prints
 * `listening <address> <port>` on stdout once both sockets are bound; SIGTERM/SIGINT stop it.
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { DEFAULT_DNS_PORT, DnsResponder, type RecordSet } from "../agent/dns/mod.ts";
import type { KubeObject } from "../lib/gatewayapi/mod.ts";
import { Engine } from "../lib/engine/mod.ts";
import { recordsFromMesh } from "../agent/dns/mod.ts";
import { ipv4Bytes } from "../agent/dns/mod.ts";

/** Splits "host:port", "[v6]:port" or a bare host. */
export function splitAddress(s: string): { address: string; port: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (v6) return { address: v6[1], port: v6[2] ? Number(v6[2]) : DEFAULT_DNS_PORT };
  const i = s.lastIndexOf(":");
  if (i > 0 && s.indexOf(":") === i) {
    return { address: s.slice(0, i), port: Number(s.slice(i + 1)) };
  }
  return { address: s, port: DEFAULT_DNS_PORT };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      "dns-address": { type: "string", default: `127.0.0.1:${DEFAULT_DNS_PORT}` },
      "mesh-domain": { type: "string", default: "aether.internal" },
      upstream: { type: "string", multiple: true },
      record: { type: "string", multiple: true },
      "records-file": { type: "string" },
      "rate-limit-qps": { type: "string" },
      "rate-limit-burst": { type: "string" },
    },
  });
  const domain = values["mesh-domain"]!;
  const records = new Map<string, RecordSet>();
  if (values["records-file"]) {
    const doc = JSON.parse(await Deno.readTextFile(values["records-file"]));
    const items: KubeObject[] = Array.isArray(doc) ? doc : doc.items ?? [];
    // The same engine as the agent: resolve's mesh services and their one owner rule.
    const engine = new Engine({
      logger: new Logger("dns-responder", () => {}, "error"),
      metrics: new Registry(),
      resolve: { meshDomain: domain },
      sinks: [{
        name: "records",
        apply: ({ result }) => {
          for (const [k, v] of recordsFromMesh(result.mesh)) records.set(k, v);
        },
      }],
      showStatuses: false,
      logProblems: false,
    });
    await engine.apply({ revision: 1, objects: items, problems: [], origins: new Map() });
    if (engine.status.error) throw new Error(`records-file: ${engine.status.error}`);
    for (const p of engine.status.problems) {
      console.error(`records-file: ${p.kind} ${p.name}: ${p.message}`);
    }
  }
  for (const r of values.record ?? []) {
    const [name, ips = ""] = r.split("=");
    const list = ips.split(",").filter(Boolean);
    records.set(`${name}.${domain}`, {
      a: list.filter((ip) => ipv4Bytes(ip)),
      aaaa: list.filter((ip) => ip.includes(":")),
    });
  }
  const qps = values["rate-limit-qps"];
  const burst = values["rate-limit-burst"];
  const responder = new DnsResponder({
    meshDomain: domain,
    records,
    upstreams: values.upstream,
    metrics: new Registry(),
    logger: new Logger("dns"),
    rateLimit: {
      qps: qps === undefined ? undefined : Number(qps),
      burst: burst === undefined ? undefined : Number(burst),
    },
  });
  const bound = await responder.listen(splitAddress(values["dns-address"]!));
  console.log(`listening ${bound.address} ${bound.port}`);
  const stop = async () => {
    await responder.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}
