/**
 * What the file source remembers of each config file between reads (its text, its parse, its last
 * good parse): the shape files.ts fills and kept.ts saves to and loads from disk, in a module of
 * its own so neither imports the other for it.
 * @module
 */
import type { ParsedFile } from "./yaml_docs.ts";

/** One file as last read: its text and parse, and its last parse without YAML errors. */
export interface FileMemo {
  text: string;
  parsed: ParsedFile;
  /** The last parse that had no invalid document, its text and when it was read (ISO time). */
  good?: { parsed: ParsedFile; at: string; text: string };
}

/**
 * Parsed files by path with the text they were parsed from. A file whose text is unchanged since
 * the last read yields the very same objects, so resolve's per-object memo recognises them; a
 * changed file re-parses only its changed documents.
 */
export type ParseMemo = Map<string, FileMemo>;
