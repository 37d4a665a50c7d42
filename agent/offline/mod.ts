/**
 * `agent translate`: the offline translator. Reads a folder or file of Gateway API YAML once,
 * runs the same resolve → translate → encode the running agent does, and prints the xDS
 * resources each proxy would be served (and, with `--status`, every object's Gateway API status
 * and every problem). Exits 1 when the config has problems, so it doubles as a CI check.
 * See docs/standalone.md ("Offline translate").
 * @module
 */
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import type { ObjectStatus, Problem } from "../../lib/gatewayapi/mod.ts";
import { Engine, type Resolved, type Sink } from "../../lib/engine/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { readConfig } from "../../lib/source/files/mod.ts";
import { Snapshot } from "../xds/cache/mod.ts";
import { messageType, typeUrlPrefix } from "../xds/proto.ts";
import { translate } from "../xds/translate/mod.ts";
import { translateNode } from "../xds/translate/node/mod.ts";
import { podsOnNode } from "../../lib/gatewayapi/mod.ts";
import { chunkedWriter, JsonList, JsonObject, writeJson } from "./json_out.ts";

/** Options of {@link translateConfig}. */
export interface TranslateConfigOptions {
  /** Folder (read recursively) or file of YAML. */
  config: string;
  /** `edge` (the standalone edge proxy) or `node` (every node proxy named by a Pod). */
  role: "edge" | "node";
  /** Address Gateway listeners bind (edge). Default 127.0.0.1. */
  bindAddress?: string;
  /** Mesh domain. Default aether.internal. */
  meshDomain?: string;
  /** Edge: the Envoy node id reported. Node: only this node (default: every node a Pod names). */
  nodeId?: string;
}

/** A problem, with the file it came from where known. */
export type TranslateProblem = Problem & { source?: string };

/** What one proxy is served: its snapshot version and the encoded resources. */
export interface ProxyOutput {
  nodeId: string;
  version: string;
  snapshot: Snapshot;
}

/** The result of one offline translate. */
export interface TranslateOutput {
  role: "edge" | "node";
  proxies: ProxyOutput[];
  objects: ObjectStatus[];
  problems: TranslateProblem[];
}

/**
 * The offline translator's sink: what every proxy of the role is served, encoded as the agent
 * encodes it (a resource that does not fit Envoy's schema is left out and becomes a problem), and
 * resolve's own statuses (unmerged: the output is the same for the same input).
 */
class ProxiesSink implements Sink {
  readonly name = "proxies";
  proxies: ProxyOutput[] = [];
  objects: ObjectStatus[] = [];
  problems: TranslateProblem[] = [];

  constructor(readonly o: TranslateConfigOptions) {}

  apply({ input, result }: Resolved): void {
    const encode = (nodeId: string, resources: Parameters<typeof Snapshot.fromResources>[0]) => {
      const snapshot = Snapshot.fromResources(
        resources,
        (typeUrl, name, error) =>
          this.problems.push({
            kind: typeUrl.slice(typeUrl.lastIndexOf(".") + 1),
            name,
            field: "",
            message: `resource left out: it does not fit Envoy's schema: ${error.message}`,
          }),
      );
      return { nodeId, version: snapshot.version, snapshot };
    };
    this.objects = result.statuses;
    if (this.o.role === "edge") {
      this.proxies = [
        encode(this.o.nodeId ?? "aether-standalone", translate(result.ir, { edge: true })),
      ];
      return;
    }
    // Every mesh service is in the set: what the node serves once each has been asked for.
    const dependencies = result.mesh.services.map((s) => s.authority).sort();
    const nodes = this.o.nodeId ? [this.o.nodeId] : [
      ...new Set(
        input.objects.filter((x) => x.kind === "Pod" && typeof x.spec?.nodeName === "string")
          .map((x) => x.spec!.nodeName as string),
      ),
    ].sort();
    this.proxies = nodes.map((nodeId) =>
      encode(
        nodeId,
        translateNode(result.mesh, {
          nodeId,
          pods: podsOnNode(input.objects, nodeId),
          dependencies,
        }),
      )
    );
  }
}

/** Reads the config once and computes what every proxy of `role` is served. */
export async function translateConfig(o: TranslateConfigOptions): Promise<TranslateOutput> {
  const snap = await readConfig(o.config);
  const out = new ProxiesSink(o);
  // The edge role prints no mesh: resolve skips building it. The engine loads the CEL library
  // only when an object reaches a CRD rule without a hand-written predicate.
  const engine = new Engine({
    logger: new Logger("translate", () => {}, "error"),
    metrics: new Registry(),
    resolve: {
      bindAddress: o.bindAddress,
      meshDomain: o.meshDomain ?? "aether.internal",
      mesh: o.role === "node",
    },
    sinks: [out],
    showStatuses: false,
    logProblems: false,
  });
  await engine.apply({ ...snap, revision: 1 });
  if (engine.status.error) throw new Error(engine.status.error);
  return {
    role: o.role,
    proxies: out.proxies,
    objects: out.objects,
    problems: [...engine.status.problems, ...out.problems],
  };
}

/**
 * Per xDS type that has resources: its short name, and its resources decoded one at a time into
 * Envoy's JSON form (enum names, `@type` on every Any) as they are iterated. Secrets are listed by
 * name only: private keys never print.
 */
function* resourceLists(snapshot: Snapshot): Generator<[string, Iterable<unknown>]> {
  for (const typeUrl of snapshot.typeUrls()) {
    const short = typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
    const type = messageType(typeUrl.slice(typeUrlPrefix.length));
    const items = snapshot.resources(typeUrl).items;
    if (items.size === 0) continue;
    yield [short, {
      *[Symbol.iterator]() {
        for (const r of items.values()) {
          yield short === "Secret" ? { name: r.name } : type.toObject(type.decode(r.value), {
            longs: Number,
            enums: String,
            json: true,
          });
        }
      },
    }];
  }
}

/** A snapshot decoded into Envoy's JSON form, one list per xDS type keyed by its short name. */
export function decodeResources(snapshot: Snapshot): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const [short, items] of resourceLists(snapshot)) out[short] = [...items];
  return out;
}

/** The printed document: per proxy its resources; with `status`, objects and problems. */
export function outputDocument(out: TranslateOutput, status: boolean): Record<string, unknown> {
  return {
    role: out.role,
    proxies: out.proxies.map((p) => ({
      nodeId: p.nodeId,
      version: p.version,
      resources: decodeResources(p.snapshot),
    })),
    ...(status ? { objects: out.objects, problems: out.problems } : {}),
  };
}

/**
 * {@link outputDocument} for {@link writeJson}: each proxy, each type's list and each resource
 * made only when it is printed (the same JSON text, without the whole document in memory).
 */
export function streamedDocument(out: TranslateOutput, status: boolean): JsonObject {
  const proxy = (p: ProxyOutput) =>
    new JsonObject([
      ["nodeId", p.nodeId],
      ["version", p.version],
      ["resources", new JsonObject(mapIterable(resourceLists(p.snapshot), toJsonList))],
    ]);
  return new JsonObject([
    ["role", out.role],
    ["proxies", new JsonList(mapIterable(out.proxies, proxy))],
    ...(status ? [["objects", out.objects] as const, ["problems", out.problems] as const] : []),
  ]);
}

const toJsonList = ([short, items]: [string, Iterable<unknown>]) =>
  [short, new JsonList(items)] as const;

/** `f` of each of `items`, made as it is iterated. */
function mapIterable<T, U>(items: Iterable<T>, f: (item: T) => U): Iterable<U> {
  return {
    *[Symbol.iterator]() {
      for (const item of items) yield f(item);
    },
  };
}

const usage = `usage: agent translate --config <dir|file> [flags]

Prints the xDS resources the agent would serve for the config, then exits: 0 when the config has
no problems, 1 when it has (each is printed on stderr), 2 on a usage error.

flags:
  --config <path>         folder (read recursively) or file of Gateway API YAML
  --role <edge|node>      edge: the standalone edge proxy (default); node: every node proxy a Pod names
  --output <yaml|json>    output format (default yaml)
  --status                also print every object's Gateway API status and every problem
  --node-id <id>          edge: the node id shown; node: only this node
  --bind-address <ip>     address Gateway listeners bind (default 127.0.0.1)
  --mesh-domain <domain>  mesh domain (default aether.internal)
`;

/** Where the command writes. */
export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const processIO: CommandIO = {
  stdout: (t) => writeAll(Deno.stdout, t),
  stderr: (t) => writeAll(Deno.stderr, t),
};

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(file.writeSync(bytes));
}

/** Runs `agent translate <args>`; returns the exit code. */
export async function translateCommand(args: string[], io: CommandIO = processIO): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args,
      options: {
        config: { type: "string" },
        role: { type: "string", default: "edge" },
        output: { type: "string", default: "yaml" },
        status: { type: "boolean", default: false },
        "node-id": { type: "string" },
        "bind-address": { type: "string" },
        "mesh-domain": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (e) {
    io.stderr(`agent translate: ${(e as Error).message}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    io.stdout(usage);
    return 0;
  }
  const fail = (why: string) => (io.stderr(`agent translate: ${why}\n\n${usage}`), 2);
  if (!values.config) return fail("--config is required (a folder or file of YAML)");
  if (values.role !== "edge" && values.role !== "node") return fail("--role is edge or node");
  if (values.output !== "yaml" && values.output !== "json") return fail("--output is yaml or json");
  const out = await translateConfig({
    config: values.config,
    role: values.role,
    nodeId: values["node-id"],
    bindAddress: values["bind-address"],
    meshDomain: values["mesh-domain"],
  });
  if (values.output === "json") {
    // Printed resource by resource: the document is never held whole, as objects or as text.
    const json = chunkedWriter(io.stdout);
    writeJson(streamedDocument(out, values.status), json.write);
    json.write("\n");
    json.end();
  } else {
    const doc = outputDocument(out, values.status);
    io.stdout(stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 }));
  }
  for (const p of out.problems) {
    const where = [p.source, [p.kind, p.namespace, p.name].filter(Boolean).join("/"), p.field]
      .filter(Boolean).join(" ");
    io.stderr(`problem: ${where}: ${p.message}\n`);
  }
  if (out.problems.length > 0) {
    io.stderr(`agent translate: ${out.problems.length} problem(s) in the config\n`);
    return 1;
  }
  return 0;
}
