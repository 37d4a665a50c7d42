/**
 * Parses a multi-document YAML text into Kubernetes-shaped objects, turning every defect into a
 * SourceProblem that names the file, the document and (where known) the object and field.
 * @module
 */
import { parseAllDocuments } from "yaml";
import type { SourceObject, SourceProblem } from "./types.ts";

/** The objects and problems found in one file. */
export interface ParsedFile {
  objects: SourceObject[];
  problems: SourceProblem[];
}

function problem(
  source: string,
  message: string,
  extra: Partial<SourceProblem> = {},
): SourceProblem {
  return { source, kind: "", name: "", field: "", message, ...extra };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Expands `kind: List` documents into their items. */
function flatten(doc: unknown): unknown[] {
  if (
    isRecord(doc) && typeof doc.kind === "string" && doc.kind.endsWith("List") &&
    Array.isArray(doc.items)
  ) {
    return doc.items;
  }
  return [doc];
}

/** Checks the envelope (apiVersion, kind, metadata.name) and narrows to SourceObject. */
function checkEnvelope(
  source: string,
  where: string,
  value: unknown,
): { object: SourceObject } | { problem: SourceProblem } {
  const fail = (message: string, extra: Partial<SourceProblem> = {}) => ({
    problem: problem(source, `${where}: ${message}`, extra),
  });
  if (!isRecord(value)) return fail("expected a mapping with apiVersion, kind and metadata");
  const kind = typeof value.kind === "string" ? value.kind : "";
  const meta = isRecord(value.metadata) ? value.metadata : undefined;
  const name = typeof meta?.name === "string" ? meta.name : "";
  const namespace = typeof meta?.namespace === "string" ? meta.namespace : undefined;
  const at = { kind, name, namespace };
  if (typeof value.apiVersion !== "string" || !value.apiVersion) {
    return fail("apiVersion is required", { ...at, field: "apiVersion" });
  }
  if (!kind) return fail("kind is required", { ...at, field: "kind" });
  if (!meta) return fail("metadata is required", { ...at, field: "metadata" });
  if (!name) return fail("metadata.name is required", { ...at, field: "metadata.name" });
  return { object: value as SourceObject };
}

/** Parses `text` (the content of `source`). Never throws. */
export function parseYamlObjects(source: string, text: string): ParsedFile {
  const objects: SourceObject[] = [];
  const problems: SourceProblem[] = [];
  let docs;
  try {
    docs = parseAllDocuments(text, { prettyErrors: true });
  } catch (e) {
    return { objects, problems: [problem(source, `cannot parse YAML: ${(e as Error).message}`)] };
  }
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    const where = `document ${i + 1}`;
    if (doc.errors.length > 0) {
      const first = doc.errors[0];
      const line = first.linePos?.[0]?.line;
      problems.push(
        problem(
          source,
          `${where}: invalid YAML${line ? ` at line ${line}` : ""}: ${
            first.message.split("\n")[0]
          }`,
        ),
      );
      return;
    }
    const value = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) return; // empty document
    for (const item of flatten(value)) {
      const checked = checkEnvelope(source, where, item);
      if ("problem" in checked) problems.push(checked.problem);
      else objects.push(checked.object);
    }
  });
  return { objects, problems };
}
