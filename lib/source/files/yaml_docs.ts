/**
 * Parses a multi-document YAML text into Kubernetes-shaped objects, turning every defect into a
 * SourceProblem that names the file, the document and (where known) the line, object and field.
 * Never throws: every exception of the YAML parser, and every limit (yaml_limits.ts), becomes a
 * problem. Documents are parsed one by one (js-yaml, core schema: timestamps stay strings); with
 * the previous parse of the same file, documents whose text is unchanged are not parsed again
 * and yield the very same objects.
 * @module
 */
// @ts-types="@types/js-yaml"
import { CORE_SCHEMA, load, YAMLException } from "js-yaml";
import type { SourceObject, SourceProblem } from "../types.ts";
import {
  checkDepth,
  defaultParseLimits,
  LimitError,
  measure,
  type ParseLimits,
} from "./yaml_limits.ts";
import { hasContent, splitYamlDocuments } from "./yaml_split.ts";

/** A problem of one document, before it is placed (document number, file line). */
interface DocProblem {
  message: string;
  /** 0-based line inside the document, when the parser gave one (a YAML syntax error). */
  line?: number;
  extra?: Partial<SourceProblem>;
}

/** The parse of one document's text (reused while the text is the same). */
export interface ParsedDoc {
  objects: SourceObject[];
  problems: DocProblem[];
  /** The text is not valid YAML or is over a limit (as opposed to a bad object envelope). */
  invalid: boolean;
}

/** The objects and problems found in one file. */
export interface ParsedFile {
  objects: SourceObject[];
  problems: SourceProblem[];
  /** Some document is not valid YAML or the file is over a limit. */
  invalid: boolean;
  /** Document parses by text, handed to the next parse of this file. */
  docs: Map<string, ParsedDoc>;
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
function checkEnvelope(value: unknown): { object: SourceObject } | { problem: DocProblem } {
  const fail = (message: string, extra: Partial<SourceProblem> = {}) => ({
    problem: { message, extra },
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

/** Parses one document's text. Never throws. */
export function parseDocument(text: string, limits: ParseLimits = defaultParseLimits): ParsedDoc {
  let value: unknown;
  try {
    value = load(text, { schema: CORE_SCHEMA });
    if (!text.includes("&")) {
      // No anchor, so no alias: only the depth needs checking.
      checkDepth(value, limits);
    } else {
      const { shared } = measure(value, limits);
      // Aliases make several places share one object; give each its own copy (bounded by the
      // maxNodes check above) so nothing downstream sees one edit in two places.
      if (shared) value = JSON.parse(JSON.stringify(value));
    }
  } catch (e) {
    if (e instanceof YAMLException) {
      return {
        objects: [],
        problems: [{ message: e.reason ?? e.message, line: e.mark?.line ?? -1 }],
        invalid: true,
      };
    }
    const message = e instanceof LimitError
      ? e.message
      : e instanceof RangeError
      ? `nesting too deep to parse (${e.message})`
      : `cannot parse YAML: ${(e as Error)?.message ?? String(e)}`;
    return { objects: [], problems: [{ message }], invalid: true };
  }
  const objects: SourceObject[] = [];
  const problems: DocProblem[] = [];
  if (value === null || value === undefined) return { objects, problems, invalid: false };
  for (const item of flatten(value)) {
    const checked = checkEnvelope(item);
    if ("problem" in checked) problems.push(checked.problem);
    else objects.push(checked.object);
  }
  return { objects, problems, invalid: false };
}

/**
 * Parses `text` (the content of `source`). `previous` is the last parse of the same file: its
 * documents are reused where the text is unchanged. Never throws.
 */
export function parseYamlObjects(
  source: string,
  text: string,
  previous?: ParsedFile,
  limits: ParseLimits = defaultParseLimits,
): ParsedFile {
  const docs = new Map<string, ParsedDoc>();
  const objects: SourceObject[] = [];
  const problems: SourceProblem[] = [];
  const fileProblem = (message: string): ParsedFile => ({
    objects,
    problems: [problem(source, message)],
    invalid: true,
    docs,
  });
  try {
    if (text.length > limits.maxFileBytes) {
      return fileProblem(
        `file is larger than ${limits.maxFileBytes} bytes; split it into several files`,
      );
    }
    const chunks = splitYamlDocuments(text).filter((c) => hasContent(c.text));
    if (chunks.length > limits.maxDocuments) {
      return fileProblem(
        `file has ${chunks.length} documents, more than ${limits.maxDocuments}; split it`,
      );
    }
    let invalid = false;
    chunks.forEach((chunk, i) => {
      let doc = docs.get(chunk.text) ?? previous?.docs.get(chunk.text);
      if (!doc) doc = parseDocument(chunk.text, limits);
      docs.set(chunk.text, doc);
      invalid ||= doc.invalid;
      objects.push(...doc.objects);
      for (const p of doc.problems) {
        const where = `document ${i + 1}`;
        const message = p.line === undefined
          ? `${where}: ${p.message}`
          : `${where}: invalid YAML${
            p.line >= 0 ? ` at line ${chunk.line + p.line}` : ""
          }: ${p.message}`;
        problems.push(problem(source, message, p.extra));
      }
    });
    return { objects, problems, invalid, docs };
  } catch (e) {
    return fileProblem(`cannot parse: ${(e as Error)?.message ?? String(e)}`);
  }
}
