/**
 * Installs the chained plugin on a node and keeps it installed: the binary copied into the CNI
 * bin dir (to a temp name, then renamed: a binary the runtime is running is never overwritten in
 * place), the plugin's entry inserted into the conf dir's first configuration (cni/conflist.ts;
 * written to a temp file with the original's mode, then renamed). `watchInstall` repeats that
 * whenever either dir changes (`Deno.watchFs`: primary CNIs rewrite their file, e.g. on their own
 * upgrade) and every `resyncMs` in case an event was missed; on its way out it uninstalls only when
 * told to (`uninstallOnExit`, or when the function given there says so, asked then: see
 * cni/uninstall_check.ts): an agent restart or upgrade leaves the plugin in place, so new pods
 * wait for the next agent rather than start uncaptured.
 * @module
 */
import { basename, dirname, join } from "node:path";
import type { Logger } from "../lib/log/mod.ts";
import type { PluginKeys } from "./conf.ts";
import { isConfFile, pluginEntry, primaryFile, withEntry, withoutEntry } from "./conflist.ts";
import { PLUGIN_TYPE } from "./spec.ts";

/** Where and what to install. */
export interface InstallOptions {
  /** The node's CNI bin dir (as mounted, e.g. `/host/opt/cni/bin`). */
  binDir: string;
  /** The node's CNI conf dir (as mounted, e.g. `/host/etc/cni/net.d`). */
  confDir: string;
  /** The plugin binary to copy (the image's `/usr/local/bin/aether-cni`). */
  plugin: string;
  /** The entry's keys (socket, bound, excluded namespaces). */
  keys?: PluginKeys;
  logger?: Logger;
}

/** What one install pass did. */
export interface InstallOutcome {
  binary: "copied" | "unchanged";
  /** `waiting`: no usable configuration yet (`reason` says why); the next change retries. */
  conf: { action: "inserted" | "unchanged" | "waiting"; file?: string; reason?: string };
}

/** How much of each file {@link sameContent} reads at a time. */
const CHUNK = 64 * 1024;

/** Fills `buf` from `file` as far as it goes; returns how many bytes it holds. */
async function fill(file: Deno.FsFile, buf: Uint8Array): Promise<number> {
  let got = 0;
  while (got < buf.length) {
    const n = await file.read(buf.subarray(got));
    if (n === null) break;
    got += n;
  }
  return got;
}

/**
 * Whether the files at `a` and `b` hold the same bytes (false when `b` is missing), read a chunk
 * at a time: a resync every 30 s that read both binaries whole (≈ 1.5 MB) left that much in
 * ArrayBuffers an idle process collects late — the CNI installer's memory grew ≈ 2.8 MiB a minute
 * in the churn soak until V8's external-memory limit made it collect.
 */
export async function sameContent(a: string, b: string): Promise<boolean> {
  const [sa, sb] = await Promise.all([Deno.stat(a), Deno.stat(b).catch(() => undefined)]);
  if (!sb?.isFile || sa.size !== sb.size) return false;
  using fa = await Deno.open(a);
  // The installed copy may go (or change) between the stat and here, or while it is read — a
  // pass racing its removal: then it is not the same, and the pass copies the plugin anew.
  using fb = await Deno.open(b).catch(() => undefined);
  if (!fb) return false;
  const ba = new Uint8Array(CHUNK), bb = new Uint8Array(CHUNK);
  for (;;) {
    const [na, nb] = await Promise.all([fill(fa, ba), fill(fb, bb).catch(() => -1)]);
    if (na !== nb) return false;
    for (let i = 0; i < na; i++) if (ba[i] !== bb[i]) return false;
    if (na < CHUNK) return true;
  }
}

/** Writes `data` to `path` through a temp file in the same dir and a rename, with `mode`. */
async function atomicWrite(path: string, data: Uint8Array, mode: number): Promise<void> {
  // A leading dot and no configuration ending: neither libcni nor this installer reads it.
  const tmp = join(dirname(path), `.${basename(path)}.aether-tmp`);
  try {
    await Deno.writeFile(tmp, data, { mode });
    await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}

/** Copies the plugin binary unless the installed one is the same. */
export async function installBinary(plugin: string, binDir: string): Promise<boolean> {
  const target = join(binDir, PLUGIN_TYPE);
  if (await sameContent(plugin, target)) return false;
  await atomicWrite(target, await Deno.readFile(plugin), 0o755);
  return true;
}

/** Inserts the entry into the conf dir's first configuration, unless it is there. */
export async function installConf(
  confDir: string,
  keys: PluginKeys = {},
): Promise<InstallOutcome["conf"]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(confDir)) if (e.isFile) names.push(e.name);
  const first = primaryFile(names);
  if (!first) return { action: "waiting", reason: `no network configuration in ${confDir}` };
  const path = join(confDir, first);
  const text = await Deno.readTextFile(path);
  const edit = withEntry(first, text, pluginEntry(keys));
  if (edit === undefined) return { action: "unchanged", file: first };
  if ("error" in edit) {
    // The runtime uses this file too: never edit another one behind its back.
    return { action: "waiting", file: first, reason: `${first}: ${edit.error}` };
  }
  const mode = (await Deno.stat(path)).mode! & 0o777;
  await atomicWrite(join(confDir, edit.name), new TextEncoder().encode(edit.text), mode);
  if (edit.replaces && edit.replaces !== edit.name) await Deno.remove(path).catch(() => {});
  return { action: "inserted", file: edit.name };
}

/** One install pass: the binary, then the configuration (the runtime may call it at once). */
export async function installOnce(o: InstallOptions): Promise<InstallOutcome> {
  await Deno.mkdir(o.binDir, { recursive: true });
  await Deno.mkdir(o.confDir, { recursive: true });
  const copied = await installBinary(o.plugin, o.binDir);
  const conf = await installConf(o.confDir, o.keys);
  return { binary: copied ? "copied" : "unchanged", conf };
}

/** Removes the plugin's entry from every configuration in the conf dir, then its binary. */
export async function uninstall(o: { binDir: string; confDir: string }): Promise<string[]> {
  const edited: string[] = [];
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(o.confDir)) if (e.isFile) names.push(e.name);
  } catch { /* no conf dir: nothing to remove there */ }
  for (const name of names.filter(isConfFile)) {
    const path = join(o.confDir, name);
    const text = await Deno.readTextFile(path).catch(() => "");
    const without = withoutEntry(text);
    if (without === undefined) continue;
    const mode = (await Deno.stat(path)).mode! & 0o777;
    await atomicWrite(path, new TextEncoder().encode(without), mode);
    edited.push(name);
  }
  await Deno.remove(join(o.binDir, PLUGIN_TYPE)).catch(() => {});
  return edited.sort();
}

/** Options of {@link watchInstall}. */
export interface WatchOptions extends InstallOptions {
  signal: AbortSignal;
  /** A pass this often even without events (default 30 s). */
  resyncMs?: number;
  /**
   * Remove entry and binary when `signal` aborts (an uninstall; not an upgrade or restart); a
   * function is asked then, once the watch stopped (a rejection keeps them).
   */
  uninstallOnExit?: boolean | (() => Promise<boolean>);
  /** Told of every pass that changed something, or failed. */
  onPass?: (outcome: InstallOutcome | Error) => void;
}

/** Installs, then keeps the installation until `signal` aborts; resolves once it stopped. */
export async function watchInstall(o: WatchOptions): Promise<void> {
  const log = o.logger;
  let running: Promise<void> = Promise.resolve();
  let again = false;
  const pass = async () => {
    try {
      const outcome = await installOnce(o);
      const changed = outcome.binary === "copied" || outcome.conf.action !== "unchanged";
      if (changed) log?.info("cni install", { ...outcome });
      if (changed) o.onPass?.(outcome);
    } catch (e) {
      log?.error("cni install failed", { error: String(e) });
      o.onPass?.(e as Error);
    }
  };
  // One pass at a time; events during a pass make one more pass after it.
  const schedule = () => {
    if (again) return;
    again = true;
    running = running.then(() => {
      again = false;
      return pass();
    });
  };
  await Deno.mkdir(o.binDir, { recursive: true });
  await Deno.mkdir(o.confDir, { recursive: true });
  const watcher = Deno.watchFs([o.confDir, o.binDir], { recursive: false });
  const resync = setInterval(schedule, o.resyncMs ?? 30_000);
  const stop = () => {
    try {
      watcher.close();
    } catch { /* closed */ }
  };
  o.signal.addEventListener("abort", stop, { once: true });
  if (o.signal.aborted) stop();
  schedule();
  try {
    for await (const _ of watcher) schedule();
  } finally {
    clearInterval(resync);
    await running;
  }
  const when = o.uninstallOnExit;
  if (typeof when === "function" ? await when().catch(() => false) : when) {
    const edited = await uninstall(o);
    log?.info("cni uninstalled", { confs: edited });
  } else if (when) log?.info("cni left installed");
}
