/**
 * A mirror wired to a capturing logger and fresh metrics, recording what it passes on: the
 * registry tests on memory and on real etcd share it.
 * @module
 */
import { Logger } from "../log/mod.ts";
import { Registry } from "../metrics/mod.ts";
import type { RegistryKv } from "./kv.ts";
import { type MirrorMetrics, mirrorMetrics, RegistryMirror } from "./mirror.ts";

/** A mirror under test with what it logged and passed on. */
export interface WatchedMirror {
  mirror: RegistryMirror;
  metrics: MirrorMetrics;
  logs: { level: string; msg: string }[];
  /** Every onChange call's origins. */
  changes: string[][];
  /** The entry count of each origin after every change (a drop is a delete storm). */
  sizes: Map<string, number[]>;
}

/** A mirror on `kv` (not started). */
export function watchedMirror(kv: RegistryKv, backoffMs = 50, probeMs = 500): WatchedMirror {
  const logs: { level: string; msg: string }[] = [];
  const logger = new Logger("registry", (line) => {
    const { level, msg } = JSON.parse(line);
    logs.push({ level, msg });
  }, "debug");
  const metrics = mirrorMetrics(new Registry());
  const changes: string[][] = [];
  const sizes = new Map<string, number[]>();
  const mirror: RegistryMirror = new RegistryMirror({
    kv,
    logger,
    metrics,
    backoff: { initialMs: backoffMs, maxMs: backoffMs * 4 },
    probeMs,
    onChange: (changed) => {
      changes.push([...changed].sort());
      for (const id of changed) {
        const list = sizes.get(id) ?? [];
        list.push(mirror.origin(id)?.entries.size ?? 0);
        sizes.set(id, list);
      }
    },
  });
  return { mirror, metrics, logs, changes, sizes };
}

/** Polls `cond` every 20 ms until true, or throws after `timeoutMs`. */
export async function until(what: string, cond: () => boolean, timeoutMs = 5000): Promise<number> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

/** A quiet logger for writers. */
export function quietLogger(): Logger {
  return new Logger("registry.writer", () => {}, "error");
}
