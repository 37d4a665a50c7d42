/**
 * Reads the text `deno test` printed and finds what failed: the entries of its FAILURES list,
 * the test files they live in, and the first lines of each entry's error from its ERRORS list.
 * Pure; used by scripts/run_tests.ts to repeat the failures at the very end of a long CI log and
 * to know which files to run again alone.
 * @module
 */

/** One failed test (or a file's uncaught error) as `deno test` listed it. */
export interface Failure {
  /** The FAILURES line, e.g. `top ... inner => ./e2e/x_test.ts:12:3`. */
  readonly entry: string;
  /** The test file, relative to the run's directory, e.g. `e2e/x_test.ts`. */
  readonly file: string;
  /** The first lines of its error (from ERRORS), at most `errorLines` of them. */
  readonly error: readonly string[];
}

/** Terminal colour codes, in case the output was coloured. */
const colour = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const located = / => \.\/(\S+?):\d+:\d+$/;
const uncaught = /^\.\/(\S+) \(uncaught error\)$/;

function fileOf(entry: string): string | undefined {
  return located.exec(entry)?.[1] ?? uncaught.exec(entry)?.[1];
}

/** The lines between a ` NAME ` banner and the next banner or the summary line. */
function section(lines: readonly string[], name: string): string[] {
  const start = lines.findIndex((l) => l.trim() === name);
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const t = line.trim();
    if (t === "ERRORS" || t === "FAILURES" || /^(FAILED|ok) \|/.test(t)) break;
    out.push(line);
  }
  return out;
}

/**
 * The failures in `output` (one `deno test` run's stdout and stderr, prefixes removed), in the
 * order listed, each with up to `errorLines` lines of its error.
 */
export function failures(output: string, errorLines = 12): Failure[] {
  const lines = output.replace(colour, "").split("\n");
  const errors = section(lines, "ERRORS");
  const out: Failure[] = [];
  for (const raw of section(lines, "FAILURES")) {
    const entry = raw.trim();
    const file = fileOf(entry);
    if (entry === "" || file === undefined) continue;
    const at = errors.findIndex((l) => l.trim() === entry);
    const error: string[] = [];
    for (const l of at < 0 ? [] : errors.slice(at + 1)) {
      if (fileOf(l.trim()) !== undefined || error.length >= errorLines) break;
      if (l.trim() !== "") error.push(l);
    }
    out.push({ entry, file, error });
  }
  return out;
}

/** The distinct files of `list`, in first-seen order. */
export function failedFiles(list: readonly Failure[]): string[] {
  return [...new Set(list.map((f) => f.file))];
}

/** The digest printed at the end of the run: each failure and its first error lines. */
export function digest(list: readonly Failure[]): string[] {
  return list.flatMap((f) => [f.entry, ...f.error.map((l) => `    ${l}`)]);
}
