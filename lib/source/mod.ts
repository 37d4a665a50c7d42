/**
 * Where configuration comes from: the Source contract every source implements (types.ts). The
 * folder-of-YAML source is its own room, `files/` (its face pulls the YAML parser in only where
 * files are read).
 * @module
 */
export {
  objectKey,
  type Source,
  type SourceObject,
  type SourceProblem,
  type SourceRevision,
  type StaleFile,
} from "./types.ts";
