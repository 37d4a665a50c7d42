/**
 * Helpers for the peer smoke tests: long-running child processes with captured output (shown when
 * a test fails), polling, free ports and one-shot commands.
 * @module
 */

/** A child process whose combined output is kept for diagnostics. */
export interface Proc {
  name: string;
  child: Deno.ChildProcess;
  /** Everything the process wrote so far (stdout + stderr). */
  output(): string;
  /** The exit status once the process has ended (undefined while it runs). */
  exited(): Deno.CommandStatus | undefined;
  /** Kills the process (SIGTERM, then SIGKILL after 5 s) and waits for it. */
  stop(): Promise<void>;
}

/** Starts `cmd args…` with output captured (`env` is added to this process's environment). */
export function spawn(
  name: string,
  cmd: string,
  args: string[],
  cwd?: string,
  env?: Record<string, string>,
): Proc {
  const child = new Deno.Command(cmd, { args, cwd, env, stdout: "piped", stderr: "piped" }).spawn();
  let text = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s.pipeThrough(new TextDecoderStream())) text += chunk;
  };
  const pumped = Promise.all([pump(child.stdout), pump(child.stderr)]).catch(() => {});
  let stopped: Promise<void> | undefined;
  let status: Deno.CommandStatus | undefined;
  child.status.then((s) => status = s);
  return {
    name,
    child,
    output: () => text,
    exited: () => status,
    stop: () => {
      stopped ??= (async () => {
        try {
          child.kill("SIGTERM");
        } catch { /* already exited */ }
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* already exited */ }
        }, 5000);
        await child.status;
        clearTimeout(timer);
        await pumped;
      })();
      return stopped;
    },
  };
}

/** Stops every process (in reverse order), then rethrows nothing. */
export async function stopAll(procs: Proc[]): Promise<void> {
  for (const p of [...procs].reverse()) await p.stop();
}

/** Output of each process, for failure messages. */
export function dumpOutput(procs: Proc[], tail = 40): string {
  return procs.map((p) =>
    `--- ${p.name} (last ${tail} lines)\n${p.output().trim().split("\n").slice(-tail).join("\n")}`
  ).join("\n");
}

/** Polls `fn` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  procs: Proc[] = [],
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const dead = procs.find((p) => p.exited());
    if (dead) {
      throw new Error(
        `${dead.name} exited (${dead.exited()?.code}) while waiting for ${what}\n${
          dumpOutput(procs)
        }`,
      );
    }
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}: ${last ?? ""}\n${dumpOutput(procs)}`);
}

export { freePort } from "../http_client.ts";

/** Result of {@link exec}. */
export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion and returns its exit code and output. */
export async function exec(cmd: string, args: string[], cwd?: string): Promise<ExecResult> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
