/**
 * Echo backends (e2e/echo/cli.ts) in their own processes, for tests that hold a req/s floor: a
 * busy test event loop then cannot slow the backend, and the backend cannot slow the test. Unlike
 * `startEchos` they do not record requests.
 * @module
 */
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("./echo/cli.ts", import.meta.url));

/** An echo backend process on 127.0.0.1. */
export interface EchoProcess {
  name: string;
  hostname: string;
  port: number;
  close(): Promise<void>;
}

async function startOne(name: string, readyMs: number): Promise<EchoProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", cli, "--name", name, "--hostname", "127.0.0.1", "--port", "0"],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const close = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
  };
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const timer = setTimeout(() => reader.cancel().catch(() => {}), readyMs);
  try {
    while (!/listening (\d+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`echo ${name} exited or did not listen within ${readyMs} ms`);
      text += value;
    }
  } catch (e) {
    await close();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  reader.cancel().catch(() => {});
  return { name, hostname: "127.0.0.1", port: Number(/listening (\d+)/.exec(text)![1]), close };
}

/** Starts one echo process per name; resolves once each listens (default wait 60 s). */
export async function startEchoProcesses(
  names: string[],
  readyMs = 60000,
): Promise<Record<string, EchoProcess>> {
  const out: Record<string, EchoProcess> = {};
  try {
    for (const n of names) out[n] = await startOne(n, readyMs);
  } catch (e) {
    for (const p of Object.values(out)) await p.close();
    throw e;
  }
  return out;
}
