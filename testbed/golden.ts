/**
 * The golden-test harness every golden runner shares (resolve, translate, node translate): case
 * discovery (`<case>.in.yaml` → `<case>.out.yaml` in one folder), strict fixture parsing (a
 * duplicate key, an unknown tag or any YAML warning fails the case instead of being read some
 * way), the comparison with the one update command (`UPDATE_GOLDEN=1`), and orphaned outputs (an
 * `.out.yaml` without its `.in.yaml` fails; the update command deletes it).
 * @module
 */
import { parseAllDocuments, stringify } from "yaml";
import { join } from "node:path";

/** Whether this run regenerates golden outputs (`UPDATE_GOLDEN=1`). */
export const updating = (): boolean => Deno.env.get("UPDATE_GOLDEN") === "1";

/** Case names (sorted) of the `<case>.in.yaml` files in `dir`. */
export function goldenCaseNames(dir: string): string[] {
  return [...Deno.readDirSync(dir)]
    .map((e) => e.name)
    .filter((n) => n.endsWith(".in.yaml"))
    .map((n) => n.slice(0, -".in.yaml".length))
    .sort();
}

/**
 * Every YAML document of `file`, parsed strictly: unique keys, no warnings (unknown tags,
 * ambiguous values), no errors. Empty documents are left out. Throws naming the file and line.
 */
export function readYamlDocsStrict(file: string): unknown[] {
  const text = Deno.readTextFileSync(file);
  const docs = parseAllDocuments(text, { strict: true, uniqueKeys: true, prettyErrors: true });
  const out: unknown[] = [];
  for (const doc of docs) {
    const issues = [...doc.errors, ...doc.warnings];
    if (issues.length > 0) throw new Error(`${file}: ${issues.map((e) => e.message).join("; ")}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** The single YAML document of `file`, parsed strictly (see {@link readYamlDocsStrict}). */
export function readYamlStrict(file: string): unknown {
  const docs = readYamlDocsStrict(file);
  if (docs.length !== 1) {
    throw new Error(`${file}: expected one YAML document, found ${docs.length}`);
  }
  return docs[0];
}

/** Stable YAML text for golden outputs (no line folding, no anchors). */
export function goldenYaml(value: unknown): string {
  return stringify(value, { aliasDuplicateObjects: false, lineWidth: 0 });
}

/**
 * Compares `got` with `file`; with UPDATE_GOLDEN=1 writes it instead. Throws naming the update
 * command when the file is missing or differs.
 */
export function checkGolden(file: string, got: string, updateCommand: string): void {
  if (updating()) {
    Deno.writeTextFileSync(file, got);
    return;
  }
  let want: string;
  try {
    want = Deno.readTextFileSync(file);
  } catch {
    throw new Error(`${file} missing: run UPDATE_GOLDEN=1 ${updateCommand}`);
  }
  if (got !== want) throw new Error(`${file} differs from the output (${updateCommand})`);
}

/**
 * `.out.yaml` files of `dir` whose `.in.yaml` is gone. With UPDATE_GOLDEN=1 they are deleted
 * (and none is returned).
 */
export function orphanedOutputs(dir: string): string[] {
  const inputs = new Set(goldenCaseNames(dir));
  const orphans = [...Deno.readDirSync(dir)]
    .map((e) => e.name)
    .filter((n) => n.endsWith(".out.yaml") && !inputs.has(n.slice(0, -".out.yaml".length)))
    .sort();
  if (!updating()) return orphans;
  for (const n of orphans) Deno.removeSync(join(dir, n));
  return [];
}
