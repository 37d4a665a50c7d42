/**
 * Generates, from the vendored Gateway API CRD YAML under tools/gateway-api/<version>/<channel>/:
 * - lib/gatewayapi/admission/crd/facts.gen.ts, the structural-schema facts (types, bounds,
 *   patterns, enums, defaults, required fields, list types and keys, CEL rules);
 * - lib/gatewayapi/catalogue/kinds.gen.ts, the kind catalogue (each CRD kind's group, served
 *   versions, storage version, plural and scope);
 * - the Helm chart's `charts/aether/crds/` (byte-identical copies of the standard channel's files:
 *   Helm wants real files there, not a link).
 *
 * Run `deno task gen-crds` after replacing the vendored YAML; crd/facts_test.ts,
 * catalogue/mod_test.ts and crd/chart_test.ts fail while an output is stale.
 *
 *   deno run -A tools/gen_crds.ts [--check]
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { CrdFacts, CrdKind, CrdNode, CrdRule } from "../lib/gatewayapi/admission/mod.ts";
import type { CatalogueKind } from "../lib/gatewayapi/catalogue/mod.ts";

/** The bundle and channel aether admits against (experimental: a superset of standard). */
export const BUNDLE_VERSION = "v1.5.1";
export const CHANNEL = "experimental";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Where the vendored CRD YAML of a channel lives. */
export const crdDir = (channel: string) =>
  join(ROOT, "tools", "gateway-api", BUNDLE_VERSION, channel);
/** The generated module. */
export const OUTPUT = join(ROOT, "lib", "gatewayapi", "admission", "crd", "facts.gen.ts");
/** The generated kind catalogue. */
export const CATALOGUE_OUTPUT = join(ROOT, "lib", "gatewayapi", "catalogue", "kinds.gen.ts");

/** The chart's CRD folder: copies of {@link CHART_CHANNEL}'s vendored files. */
export const CHART_CRDS = join(ROOT, "charts", "aether", "crds");
/** The channel the chart installs. */
export const CHART_CHANNEL = "standard";

/** The files the chart's crds/ must hold: name → content, from the vendored channel. */
export async function chartCrdFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const e of Deno.readDir(crdDir(CHART_CHANNEL))) {
    if (e.isFile && e.name.endsWith(".yaml")) {
      files.set(e.name, await Deno.readTextFile(join(crdDir(CHART_CHANNEL), e.name)));
    }
  }
  return files;
}

/** What differs between the chart's crds/ and the vendored channel (empty: in sync). */
export async function chartCrdDrift(): Promise<string[]> {
  const want = await chartCrdFiles(), drift: string[] = [];
  const have = new Set<string>();
  for await (const e of Deno.readDir(CHART_CRDS)) {
    have.add(e.name);
    if (!e.isFile) drift.push(`${e.name}: not a plain file`);
    else if (!want.has(e.name)) drift.push(`${e.name}: not vendored`);
    else if (await Deno.readTextFile(join(CHART_CRDS, e.name)) !== want.get(e.name)) {
      drift.push(`${e.name}: differs from the vendored copy`);
    }
  }
  for (const name of want.keys()) if (!have.has(name)) drift.push(`${name}: missing`);
  return drift.sort();
}

async function writeChartCrds(): Promise<void> {
  const st = await Deno.lstat(CHART_CRDS).catch(() => undefined);
  if (st && !st.isDirectory) await Deno.remove(CHART_CRDS);
  await Deno.remove(CHART_CRDS, { recursive: true }).catch(() => {});
  await Deno.mkdir(CHART_CRDS, { recursive: true });
  for (const [name, text] of await chartCrdFiles()) {
    await Deno.writeTextFile(join(CHART_CRDS, name), text);
  }
}

/** Top-level fields outside the body schema (metadata is checked on its own, status is ignored). */
const ENVELOPE = new Set(["apiVersion", "kind", "metadata", "status"]);

// deno-lint-ignore no-explicit-any
type Yaml = any;

/** Every CustomResourceDefinition document in the YAML files of `dir`, by file name order. */
export async function readCrds(dir: string): Promise<Yaml[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".yaml")) names.push(entry.name);
  }
  const crds: Yaml[] = [];
  for (const name of names.sort()) {
    for (const doc of parseAllDocuments(await Deno.readTextFile(join(dir, name)))) {
      const value = doc.toJS();
      if (value?.kind === "CustomResourceDefinition") crds.push(value);
    }
  }
  return crds;
}

/** Builds the node table, storing each distinct subtree once. */
class NodeTable {
  readonly nodes: CrdNode[] = [];
  readonly #index = new Map<string, number>();

  add(schema: Yaml, envelope = false): number {
    const node = this.#node(schema, envelope);
    const key = JSON.stringify(node);
    let i = this.#index.get(key);
    if (i === undefined) {
      i = this.nodes.push(node) - 1;
      this.#index.set(key, i);
    }
    return i;
  }

  #node(s: Yaml, envelope: boolean): CrdNode {
    const n: CrdNode = {};
    const copy = <K extends keyof CrdNode>(key: K, from: string = key) => {
      if (s[from] !== undefined) n[key] = s[from];
    };
    copy("type");
    copy("format");
    copy("enum");
    copy("default");
    copy("minLength");
    copy("maxLength");
    copy("pattern");
    copy("minimum");
    copy("maximum");
    copy("minItems");
    copy("maxItems");
    copy("minProperties");
    copy("maxProperties");
    if (s.exclusiveMinimum || s.exclusiveMaximum || s.multipleOf || s.uniqueItems || s.allOf) {
      throw new Error(`unsupported schema keyword in ${JSON.stringify(s).slice(0, 200)}`);
    }
    if (s.required) {
      n.required = envelope ? s.required.filter((k: string) => !ENVELOPE.has(k)) : s.required;
    }
    if (s.properties) {
      const props: Record<string, number> = {};
      for (const [key, sub] of Object.entries(s.properties)) {
        if (!(envelope && ENVELOPE.has(key))) props[key] = this.add(sub);
      }
      n.properties = props;
    }
    if (typeof s.additionalProperties === "object") {
      n.additionalProperties = this.add(s.additionalProperties);
    }
    if (s.items) n.items = this.add(s.items);
    copy("listType", "x-kubernetes-list-type");
    copy("listMapKeys", "x-kubernetes-list-map-keys");
    if (s["x-kubernetes-int-or-string"]) n.intOrString = true;
    if (s["x-kubernetes-preserve-unknown-fields"]) n.preserveUnknownFields = true;
    if (s.oneOf) n.oneOf = s.oneOf.map((sub: Yaml) => this.add(sub));
    if (s.anyOf) n.anyOf = s.anyOf.map((sub: Yaml) => this.add(sub));
    if (s.not) n.not = this.add(s.not);
    const rules = s["x-kubernetes-validations"];
    if (rules) {
      n.rules = rules.map((r: Yaml): CrdRule => {
        if (r.messageExpression) throw new Error(`messageExpression is not supported: ${r.rule}`);
        return {
          rule: r.rule,
          message: r.message ?? `failed rule: ${r.rule}`,
          ...(/\boldSelf\b/.test(r.rule) ? { transition: true as const } : {}),
        };
      });
    }
    return n;
  }
}

/** The CRDs of one channel, each checked to be of {@link BUNDLE_VERSION}. */
async function bundleCrds(channel: string): Promise<Yaml[]> {
  const crds = await readCrds(crdDir(channel));
  for (const crd of crds) {
    const bundle = crd.metadata?.annotations?.["gateway.networking.k8s.io/bundle-version"];
    if (bundle !== BUNDLE_VERSION) {
      throw new Error(`${crd.metadata?.name}: bundle-version ${bundle}, want ${BUNDLE_VERSION}`);
    }
  }
  return crds;
}

/** The facts of the CRDs of one channel. */
export async function generateFacts(channel = CHANNEL): Promise<CrdFacts> {
  const table = new NodeTable();
  const kinds: Record<string, CrdKind> = {};
  for (const crd of await bundleCrds(channel)) {
    const versions: Record<string, number> = {};
    for (const v of crd.spec.versions) {
      if (v.served) versions[v.name] = table.add(v.schema.openAPIV3Schema, true);
    }
    kinds[crd.spec.names.kind] = {
      group: crd.spec.group,
      namespaced: crd.spec.scope === "Namespaced",
      versions,
    };
  }
  return { bundleVersion: BUNDLE_VERSION, channel, nodes: table.nodes, kinds };
}

/** The text of the generated module (one node per line, so a diff shows what changed). */
export function render(facts: CrdFacts): string {
  const lines = [
    `// Code generated by tools/gen_crds.ts (deno task gen-crds) from`,
    `// tools/gateway-api/${facts.bundleVersion}/${facts.channel}/. DO NOT EDIT.`,
    `/**`,
    ` * Structural-schema facts of the Gateway API ${facts.bundleVersion} ${facts.channel}-channel CRDs.`,
    ` * @module`,
    ` */`,
    `import type { CrdFacts } from "./facts.ts";`,
    ``,
    `/** The generated facts (see facts.ts for their shape). */`,
    `export const FACTS: CrdFacts = {`,
    `  bundleVersion: ${JSON.stringify(facts.bundleVersion)},`,
    `  channel: ${JSON.stringify(facts.channel)},`,
    `  kinds: {`,
    ...Object.entries(facts.kinds).map(([kind, k]) => `    ${kind}: ${JSON.stringify(k)},`),
    `  },`,
    `  nodes: [`,
    ...facts.nodes.map((n, i) => `    /* ${i} */ ${JSON.stringify(n)},`),
    `  ],`,
    `};`,
    ``,
  ];
  return lines.join("\n");
}

/** The catalogue entries of the CRDs of one channel, in file name order. */
export async function generateCatalogue(channel = CHANNEL): Promise<CatalogueKind[]> {
  return (await bundleCrds(channel)).map((crd): CatalogueKind => {
    const served: string[] = crd.spec.versions.filter((v: Yaml) => v.served).map((v: Yaml) =>
      v.name
    );
    const storage: string | undefined = crd.spec.versions.find((v: Yaml) => v.storage)?.name;
    if (storage === undefined || !served.includes(storage)) {
      throw new Error(`${crd.metadata?.name}: storage version ${storage} is not served`);
    }
    return {
      kind: crd.spec.names.kind,
      group: crd.spec.group,
      versions: served,
      storage,
      plural: crd.spec.names.plural,
      namespaced: crd.spec.scope === "Namespaced",
    };
  });
}

/** The text of the generated catalogue module (one kind per line). */
export function renderCatalogue(kinds: readonly CatalogueKind[], channel = CHANNEL): string {
  return [
    `// Code generated by tools/gen_crds.ts (deno task gen-crds) from`,
    `// tools/gateway-api/${BUNDLE_VERSION}/${channel}/. DO NOT EDIT.`,
    `/**`,
    ` * The kinds of the Gateway API ${BUNDLE_VERSION} ${channel}-channel CRDs: group, served`,
    ` * versions (the CRD's order), storage version, plural and scope. No schemas: see`,
    ` * admission/crd/.`,
    ` * @module`,
    ` */`,
    `import type { CatalogueKind } from "./kind.ts";`,
    ``,
    `/** The CRD kinds, in the vendored files' name order (see kind.ts for the shape). */`,
    `export const CRD_KINDS: readonly CatalogueKind[] = [`,
    ...kinds.map((k) => `  ${JSON.stringify(k)},`),
    `];`,
    ``,
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { check: { type: "boolean" } } });
  const outputs = [
    { path: OUTPUT, text: render(await generateFacts()) },
    { path: CATALOGUE_OUTPUT, text: renderCatalogue(await generateCatalogue()) },
  ];
  if (values.check) {
    const stale: string[] = [];
    for (const { path, text } of outputs) {
      if (await Deno.readTextFile(path).catch(() => "") !== text) stale.push(path);
    }
    const drift = await chartCrdDrift();
    if (stale.length || drift.length) {
      for (const path of stale) console.error(`${path} is stale: run deno task gen-crds`);
      for (const d of drift) console.error(`${CHART_CRDS}/${d}: run deno task gen-crds`);
      Deno.exit(1);
    }
    console.error("facts.gen.ts, kinds.gen.ts and the chart's crds/ are up to date");
  } else {
    for (const { path, text } of outputs) {
      await Deno.writeTextFile(path, text);
      console.error(`wrote ${path}`);
    }
    await writeChartCrds();
    console.error(`wrote ${CHART_CRDS}`);
  }
}
