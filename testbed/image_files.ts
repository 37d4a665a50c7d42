/**
 * Which files aether's image holds (no peer, no build: the image builder, the Dockerfile's rule
 * and lib/shipped_closure_test.ts share it): the shipped folders whole but for tests, test
 * support and test data, and the two top-level files `deno run` needs.
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isTest, isTestData, isTestSupport } from "./test_files.ts";

/** The project root. */
const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

/**
 * The top-level folders that ship: the image holds each whole, but for its tests, test support
 * and test data. Only the binaries' import closure and the data files they read may live there
 * (lib/shipped_closure_test.ts); anything else belongs in testbed/, tools/ or a folder of its own.
 */
export const shippedDirs: readonly string[] = ["agent", "controller", "cni", "lib", "proto"];

/** The top-level files that ship: the import map and compiler options, and the lock file. */
export const shippedFiles: readonly string[] = ["deno.json", "deno.lock"];

/**
 * Whether a repository path belongs in the image (pure): a shipped file, or a file of a shipped
 * folder that is not a test, test support or test data.
 */
export function isImageSource(path: string): boolean {
  if (shippedFiles.includes(path)) return true;
  if (!shippedDirs.includes(path.split("/")[0])) return false;
  return !isTest(path) && !isTestSupport(path) && !isTestData(path);
}

/** The binaries: the entry points `deno install` caches (those present in this checkout). */
export async function entryPoints(root: string): Promise<string[]> {
  const all = ["agent/main.ts", "controller/main.ts", "cni/main.ts"];
  const present: string[] = [];
  for (const e of all) if (await exists(join(root, e))) present.push(e);
  return present;
}

/**
 * The checkout's files that go into the image, sorted: {@link isImageSource} over what git lists
 * (tracked or new, not ignored, still present).
 */
export async function imageSources(root: string = projectRoot): Promise<string[]> {
  const git = await new Deno.Command("git", {
    args: ["ls-files", "--cached", "--others", "--exclude-standard"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!git.success) throw new Error(`git ls-files: ${new TextDecoder().decode(git.stderr)}`);
  const listed = new TextDecoder().decode(git.stdout);
  const out: string[] = [];
  for (const path of listed.split("\n").filter(isImageSource).sort()) {
    if (await exists(join(root, path))) out.push(path); // deleted but not yet committed
  }
  return out;
}

/**
 * The checkout files an image holds under `/app` (pure, over its layer's paths): its files there
 * but for `node_modules/`, which `deno install` wrote. For a built image it equals
 * {@link imageSources}.
 */
export function appSources(layerPaths: readonly string[]): string[] {
  return layerPaths
    .filter((p) => p.startsWith("app/") && !p.endsWith("/") && !p.startsWith("app/node_modules/"))
    .map((p) => p.slice("app/".length))
    .sort();
}
