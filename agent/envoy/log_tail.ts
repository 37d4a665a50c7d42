/**
 * Follows Envoy's log file (Envoy writes it itself with `--log-path`, so Envoy never blocks on,
 * or dies with, a pipe to the agent) and forwards new lines into the agent's log at their level.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";

/** Level of one Envoy log line (format `[time][level][logger] message`). */
export function envoyLineLevel(line: string): "error" | "warn" | "info" {
  return /\]\[(critical|error)\]/.test(line)
    ? "error"
    : /\]\[warning\]/.test(line)
    ? "warn"
    : "info";
}

/** Polls a file for appended lines. */
export class LogTail {
  #offset = 0;
  #timer?: ReturnType<typeof setInterval>;
  #busy = false;
  #partial = "";

  constructor(readonly path: string, readonly logger: Logger, readonly intervalMs = 500) {}

  /** Starts following from the file's current end. */
  async start(): Promise<void> {
    this.#offset = await Deno.stat(this.path).then((s) => s.size, () => 0);
    this.#timer = setInterval(() => this.#poll(), this.intervalMs);
  }

  async #poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    let file: Deno.FsFile | undefined;
    try {
      file = await Deno.open(this.path, { read: true });
      const { size } = await file.stat();
      if (size < this.#offset) this.#offset = 0; // truncated or replaced
      if (size === this.#offset) return;
      await file.seek(this.#offset, Deno.SeekMode.Start);
      const buf = new Uint8Array(Math.min(size - this.#offset, 1 << 20));
      const n = await file.read(buf) ?? 0;
      this.#offset += n;
      const lines = (this.#partial + new TextDecoder().decode(buf.subarray(0, n))).split("\n");
      this.#partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim()) this.logger[envoyLineLevel(line)]("envoy", { line });
      }
    } catch {
      /* not there yet */
    } finally {
      file?.close();
      this.#busy = false;
    }
  }

  /** Stops following. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
