/**
 * `startLoad` (load.ts) in its own process (mesh_load.ts), optionally inside a network namespace:
 * a test's own event loop (polling, echo backends, an in-process agent) then cannot starve the
 * load on a busy machine, and the load cannot starve the test.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadResult } from "./load.ts";

const script = fileURLToPath(new URL("./mesh_load.ts", import.meta.url));

/** What a load process saw: {@link LoadResult} with the failures as a plain object. */
export type LoadReport = Omit<LoadResult, "failures"> & { failures: Record<string, number> };

/** Options of {@link spawnLoad}. */
export interface LoadProcessOptions {
  port: number;
  /** Host headers to cycle through (each a route that must keep answering 2xx). */
  authorities: string[];
  /** Kept-alive connections, each one request at a time (default 16). */
  concurrency?: number;
  /** Run inside this network namespace (`ip netns exec`), with `ip` the path of the tool. */
  netns?: { name: string; ip: string };
  /** How long to wait for the first answers (default 60 s: a loaded machine starts Deno slowly). */
  readyMs?: number;
}

/** A running load process. */
export interface LoadProcess {
  /** Ends the load (idempotent) and returns its counts. */
  stop(): Promise<LoadReport>;
}

/**
 * Starts the load process and resolves once every connection has had an answer (so the load is
 * running before the test acts). Call `stop()` in a `finally` too: it also ends a failed run.
 */
export async function spawnLoad(o: LoadProcessOptions): Promise<LoadProcess> {
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-load-" });
  const stopFile = join(dir, "stop"), readyFile = join(dir, "ready");
  const load = [
    Deno.execPath(),
    "run",
    "-A",
    script,
    ...o.authorities.flatMap((a) => ["--host", a]),
    "--port",
    String(o.port),
    "--concurrency",
    String(o.concurrency ?? 16),
    "--stop-file",
    stopFile,
    "--ready-file",
    readyFile,
  ];
  const cmd = o.netns ? [o.netns.ip, "netns", "exec", o.netns.name, ...load] : load;
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let exited = false;
  output.then(() => (exited = true), () => (exited = true));
  const report = output.then((out) => {
    const text = new TextDecoder().decode(out.stdout).trim();
    if (!out.success || !text) {
      throw new Error(`load process failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    return JSON.parse(text.split("\n").pop()!) as LoadReport;
  }).finally(() => Deno.remove(dir, { recursive: true }).catch(() => {}));
  report.catch(() => {});
  const stop = async () => {
    await Deno.writeTextFile(stopFile, "").catch(() => {});
    return await report;
  };
  const deadline = Date.now() + (o.readyMs ?? 60000);
  while (!(await Deno.stat(readyFile).then(() => true, () => false))) {
    if (exited || Date.now() > deadline) {
      await stop().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await report.catch((e) => {
        throw new Error(`the load process did not start sending: ${e.message}`);
      });
      throw new Error("the load process did not get its first answers in time");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { stop };
}
