/**
 * The file source: every YAML document in a folder (recursively) or one file, re-read and
 * re-delivered whenever something under it changes (debounced). Bad files become problems; the
 * good objects of every other file keep being delivered.
 * @module
 */
import { extname, join, resolve } from "node:path";
import { type ParsedFile, parseYamlObjects } from "./yaml_docs.ts";
import { defaultParseLimits } from "./yaml_limits.ts";
import type { FileMemo, ParseMemo } from "./file_memo.ts";
import { loadKept, syncKept } from "./kept.ts";
import {
  objectKey,
  type Source,
  type SourceObject,
  type SourceProblem,
  type SourceRevision,
  type StaleFile,
} from "../types.ts";
import type { Logger } from "../../log/mod.ts";

const yamlExtensions = new Set([".yaml", ".yml", ".json"]);

/** Options for FileSource. */
export interface FileSourceOptions {
  /** A folder (read recursively) or a single file. */
  path: string;
  /** Milliseconds to wait after a change before re-reading (default 50). */
  debounceMs?: number;
  /** Watch for changes (default true). */
  watch?: boolean;
  /** Where a failure of a reload is logged (it never rejects; the last revision stays). */
  logger?: Logger;
  /**
   * Keep each file's last good content in this folder (kept.ts), so a restarted agent still
   * serves a file's last good objects when the file is broken at start-up.
   */
  keepDir?: string;
}

async function listFiles(path: string): Promise<string[]> {
  const info = await Deno.stat(path);
  if (info.isFile) return [path];
  const out: string[] = [];
  for await (const entry of Deno.readDir(path)) {
    if (entry.name.startsWith(".")) continue;
    const full = join(path, entry.name);
    if (entry.isDirectory) out.push(...await listFiles(full));
    else if (entry.isFile && yamlExtensions.has(extname(entry.name))) out.push(full);
  }
  return out.sort();
}

/**
 * What the file's objects are this time: its parse, or — when it has invalid YAML, is over a
 * limit or cannot be read, and parsed well before — its last good parse, marked stale.
 */
function serve(
  file: string,
  entry: FileMemo,
  now: string,
): { parsed: ParsedFile; stale?: StaleFile } {
  if (!entry.parsed.invalid) {
    if (entry.good?.parsed !== entry.parsed) {
      entry.good = { parsed: entry.parsed, at: now, text: entry.text };
    }
    return { parsed: entry.parsed };
  }
  if (!entry.good) return { parsed: entry.parsed };
  const reason = entry.parsed.problems.map((p) => p.message).join("; ");
  return {
    parsed: {
      ...entry.good.parsed,
      problems: [
        ...entry.parsed.problems,
        {
          source: file,
          kind: "",
          name: "",
          field: "",
          message:
            `file is stale: its last good content (read ${entry.good.at}) keeps serving until it parses again`,
        },
      ],
    },
    stale: { source: file, reason, since: entry.good.at },
  };
}

/**
 * Reads every file once and builds a revision (its number filled in by the caller). With `memo`,
 * unchanged files are not parsed again; the memo is updated to hold exactly the files read.
 */
export async function readConfig(
  path: string,
  memo?: ParseMemo,
  now: () => Date = () => new Date(),
): Promise<Omit<SourceRevision, "revision">> {
  const seen: ParseMemo = new Map();
  const stale: StaleFile[] = [];
  const at = now().toISOString();
  const objects = new Map<string, SourceObject>();
  const origins = new Map<string, string>();
  const problems: SourceProblem[] = [];
  let files: string[];
  try {
    files = await listFiles(path);
  } catch (e) {
    problems.push({
      source: path,
      kind: "",
      name: "",
      field: "",
      message: `cannot read config: ${(e as Error).message}`,
    });
    // Keep serving what was read before (each file then reports as stale).
    files = [...(memo?.keys() ?? [])];
  }
  for (const file of files) {
    const last = memo?.get(file);
    let entry: FileMemo;
    try {
      const { size } = await Deno.stat(file);
      if (size > defaultParseLimits.maxFileBytes) {
        throw new Error(
          `file is larger than ${defaultParseLimits.maxFileBytes} bytes; split it into several files`,
        );
      }
      const text = await Deno.readTextFile(file);
      entry = last?.text === text ? last : {
        text,
        parsed: parseYamlObjects(file, text, last?.parsed),
        good: last?.good,
      };
    } catch (e) {
      const message = `cannot read: ${(e as Error).message}`;
      entry = {
        text: "",
        parsed: { objects: [], problems: [problem(file, message)], invalid: true, docs: new Map() },
        good: last?.good,
      };
    }
    seen.set(file, entry);
    const { parsed, stale: isStale } = serve(file, entry, at);
    if (isStale) stale.push(isStale);
    problems.push(...parsed.problems);
    for (const o of parsed.objects) {
      const key = objectKey(o);
      const first = origins.get(key);
      if (first) {
        problems.push({
          source: file,
          kind: o.kind,
          namespace: o.metadata.namespace,
          name: o.metadata.name,
          field: "metadata.name",
          message: `duplicate object: already defined in ${first}; this copy is ignored`,
        });
        continue;
      }
      objects.set(key, o);
      origins.set(key, file);
    }
  }
  if (memo) {
    memo.clear();
    for (const [file, entry] of seen) memo.set(file, entry);
  }
  return { objects: [...objects.values()], problems, origins, stale };
}

function problem(source: string, message: string): SourceProblem {
  return { source, kind: "", name: "", field: "", message };
}

/**
 * Throws a NotFound that names the path and says what to do when nothing is there (else the
 * watcher's own error, "No path was found.", would be all a user sees).
 */
async function mustExist(path: string): Promise<void> {
  try {
    await Deno.stat(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new Deno.errors.NotFound(
      `config path ${path} does not exist: create it, or point --config at an existing folder ` +
        "or file of Gateway API YAML",
    );
  }
}

/**
 * Watches a folder or file and delivers a revision after each change. The path must exist when
 * it starts (a folder or file removed later is reported as a problem, the last revision kept).
 */
export class FileSource implements Source {
  readonly path: string;
  #revision = 0;
  #watcher?: Deno.FsWatcher;
  #timer?: ReturnType<typeof setTimeout>;
  #stopped = false;
  #reading: Promise<void> = Promise.resolve();
  readonly #parsed: ParseMemo = new Map();

  constructor(readonly options: FileSourceOptions) {
    this.path = resolve(options.path);
  }

  async start(onRevision: (revision: SourceRevision) => void): Promise<void> {
    await mustExist(this.path);
    const keepDir = this.options.keepDir;
    const kept = keepDir ? await loadKept(keepDir, this.#parsed) : undefined;
    // Never rejects: a failing read or consumer is logged and the next change tries again.
    const deliver = async () => {
      try {
        const snap = await readConfig(this.path, this.#parsed);
        if (keepDir && kept) {
          await syncKept(keepDir, this.#parsed, kept).catch((e) =>
            this.options.logger?.warn("cannot keep the last good config files", {
              dir: keepDir,
              error: String(e),
            })
          );
        }
        if (!this.#stopped) onRevision({ revision: ++this.#revision, ...snap });
      } catch (e) {
        this.options.logger?.error("config reload failed; the last revision keeps serving", {
          path: this.path,
          error: String((e as Error)?.stack ?? e),
        });
      }
    };
    await deliver();
    if (this.options.watch === false) return;
    this.#watcher = Deno.watchFs(this.path, { recursive: true });
    const debounce = this.options.debounceMs ?? 50;
    (async () => {
      try {
        for await (const _event of this.#watcher!) {
          clearTimeout(this.#timer);
          this.#timer = setTimeout(() => {
            this.#reading = this.#reading.then(deliver, deliver);
          }, debounce);
        }
      } catch { /* watcher closed */ }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#watcher?.close();
    await this.#reading;
  }
}

export { parseYamlObjects } from "./yaml_docs.ts";
