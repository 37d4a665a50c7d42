/**
 * The last good content of each config file, kept on disk (one small JSON file per config file)
 * so that a restarted agent still has it: a file that was broken while the agent was down keeps
 * serving what it last served, instead of its objects vanishing from an Envoy the new agent
 * adopted. Written only when a file's good content changes; removed with the file.
 * @module
 */
import { join } from "node:path";
import type { FileMemo, ParseMemo } from "./file_memo.ts";
import { parseYamlObjects } from "./yaml_docs.ts";

interface KeptFile {
  path: string;
  text: string;
  at: string;
}

async function nameOf(path: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(path));
  return [...new Uint8Array(hash).slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join(
    "",
  ) +
    ".json";
}

/** Seeds `memo` with the kept content in `dir`; returns what is on disk (path → time). */
export async function loadKept(dir: string, memo: ParseMemo): Promise<Map<string, string>> {
  const onDisk = new Map<string, string>();
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch {
    return onDisk;
  }
  for (const e of entries) {
    if (!e.isFile || !e.name.endsWith(".json")) continue;
    try {
      const k = JSON.parse(await Deno.readTextFile(join(dir, e.name))) as KeptFile;
      const parsed = parseYamlObjects(k.path, k.text);
      if (parsed.invalid) continue;
      const entry: FileMemo = { text: k.text, parsed, good: { parsed, at: k.at, text: k.text } };
      memo.set(k.path, entry);
      onDisk.set(k.path, k.at);
    } catch { /* unreadable: ignore */ }
  }
  return onDisk;
}

/** Writes the good content that changed since `onDisk`, removes that of files gone from `memo`. */
export async function syncKept(
  dir: string,
  memo: ParseMemo,
  onDisk: Map<string, string>,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [path, entry] of memo) {
    const good = entry.good;
    if (!good || onDisk.get(path) === good.at) continue;
    const file = join(dir, await nameOf(path));
    const tmp = `${file}.tmp`;
    await Deno.writeTextFile(tmp, JSON.stringify({ path, text: good.text, at: good.at }), {
      mode: 0o600,
    });
    await Deno.rename(tmp, file);
    onDisk.set(path, good.at);
  }
  for (const path of [...onDisk.keys()]) {
    if (memo.has(path)) continue;
    await Deno.remove(join(dir, await nameOf(path))).catch(() => {});
    onDisk.delete(path);
  }
}
