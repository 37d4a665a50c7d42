/**
 * The file source: every YAML document in a folder (recursively) or one file, re-read and
 * re-delivered whenever something under it changes (debounced). Bad files become problems; the
 * good objects of every other file keep being delivered.
 * @module
 */
import { extname, join, resolve } from "node:path";
import { type ParsedFile, parseYamlObjects } from "./yaml_docs.ts";
import {
  objectKey,
  type Source,
  type SourceObject,
  type SourceProblem,
  type SourceSnapshot,
} from "./types.ts";

const yamlExtensions = new Set([".yaml", ".yml", ".json"]);

/** Options for FileSource. */
export interface FileSourceOptions {
  /** A folder (read recursively) or a single file. */
  path: string;
  /** Milliseconds to wait after a change before re-reading (default 50). */
  debounceMs?: number;
  /** Watch for changes (default true). */
  watch?: boolean;
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
 * Parsed files by path with the text they were parsed from. A file whose text is unchanged since
 * the last read yields the very same objects, so resolve's per-object memo recognises them.
 */
export type ParseMemo = Map<string, { text: string; parsed: ParsedFile }>;

/**
 * Reads every file once and builds a snapshot (revision filled in by the caller). With `memo`,
 * unchanged files are not parsed again; the memo is updated to hold exactly the files read.
 */
export async function readConfig(
  path: string,
  memo?: ParseMemo,
): Promise<Omit<SourceSnapshot, "revision">> {
  const seen: ParseMemo = new Map();
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
    return { objects: [], problems, origins };
  }
  for (const file of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      problems.push({
        source: file,
        kind: "",
        name: "",
        field: "",
        message: `cannot read: ${(e as Error).message}`,
      });
      continue;
    }
    const last = memo?.get(file);
    const parsed = last?.text === text ? last.parsed : parseYamlObjects(file, text);
    seen.set(file, { text, parsed });
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
  return { objects: [...objects.values()], problems, origins };
}

/** Watches a folder or file and delivers a snapshot after each change. */
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

  async start(onSnapshot: (snapshot: SourceSnapshot) => void): Promise<void> {
    const deliver = async () => {
      const snap = await readConfig(this.path, this.#parsed);
      if (!this.#stopped) onSnapshot({ revision: ++this.#revision, ...snap });
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
            this.#reading = this.#reading.then(deliver);
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
