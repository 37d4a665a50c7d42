/**
 * Reading `ldd` output (pure): the host libraries a dynamically linked peer binary takes into its
 * image.
 * @module
 */

/** The absolute paths in `ldd` output (pure): `x => /path (addr)` and the loader's `/path (addr)`. */
export function lddPaths(text: string): string[] {
  const paths = new Set<string>();
  for (const line of text.split("\n")) {
    const m = line.match(/(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/);
    if (m) paths.add(m[1]);
  }
  return [...paths].sort();
}
