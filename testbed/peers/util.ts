/**
 * Small process and file-system helpers shared by the peer installers.
 * @module
 */
import { join } from "node:path";

/** Options for {@link run}. */
export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Written to the command's stdin (which is otherwise inherited). */
  stdin?: string;
}

/** Runs a command to completion; throws with the tail of stderr when it fails. */
export async function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? undefined : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Written while the output is read, so a command answering before it read all of it can't
  // block; one that exits without reading it all breaks the pipe, and its exit status tells.
  const write = async (text: string) => {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(text)).then(() => w.close()).catch(() => {});
  };
  const [out] = await Promise.all([
    child.output(),
    opts.stdin === undefined ? undefined : write(opts.stdin),
  ]);
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-20).join("\n");
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${out.code}): ${err}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** Whether a path exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Finds a command on PATH (plus the sbin directories); an absolute path is checked as is. */
export async function which(command: string): Promise<string | undefined> {
  if (command.startsWith("/")) return (await exists(command)) ? command : undefined;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").concat(["/usr/sbin", "/sbin"])) {
    const p = join(dir, command);
    if (dir && await exists(p)) return p;
  }
  return undefined;
}

/**
 * Runs `fn` while holding an exclusive lock on `path` (created if needed). Test files run in
 * parallel processes, so two of them asking for the same peer must not build it twice.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const file = await Deno.open(path, { create: true, write: true });
  try {
    await file.lock(true);
    return await fn();
  } finally {
    file.close(); // closing releases the lock
  }
}

/** Total size in bytes of the regular files below `path`. */
export async function duSize(path: string): Promise<number> {
  const st = await Deno.stat(path);
  if (!st.isDirectory) return st.size;
  let total = 0;
  for await (const e of Deno.readDir(path)) total += await duSize(join(path, e.name));
  return total;
}

/** A byte count as MB with one decimal. */
export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
