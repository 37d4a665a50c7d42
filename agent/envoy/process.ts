/**
 * Runs Envoy as a child process of the agent: writes its bootstrap, starts it, forwards its log
 * lines into ours, reads back the admin address, and restarts it with back-off when it dies.
 * @module
 */
import { join } from "node:path";
import type { Logger } from "../../lib/log/mod.ts";

/** Options for EnvoyProcess. */
export interface EnvoyProcessOptions {
  /** Path of the envoy binary. */
  binary: string;
  /** The bootstrap config (an object, written as JSON). */
  bootstrap: Record<string, unknown>;
  logger: Logger;
  /** Envoy's log level (default "warning"). */
  logLevel?: string;
  /** Extra command-line arguments. */
  extraArgs?: string[];
  /** Restart Envoy when it exits unexpectedly (default true). */
  restart?: boolean;
}

/** A supervised Envoy child process. */
export class EnvoyProcess {
  #child?: Deno.ChildProcess;
  #dir?: string;
  #stopping = false;
  #restarts = 0;
  #exited?: Promise<Deno.CommandStatus>;
  /** Envoy's admin address (`host:port`), known once Envoy is up. */
  adminAddress?: string;

  constructor(readonly options: EnvoyProcessOptions) {}

  /** Starts Envoy and waits until its admin endpoint answers (up to `timeoutMs`). */
  async start(timeoutMs = 15000): Promise<void> {
    this.#dir ??= await Deno.makeTempDir({ prefix: "aether-envoy-" });
    const configPath = join(this.#dir, "bootstrap.json");
    const adminPath = join(this.#dir, "admin-address");
    await Deno.writeTextFile(configPath, JSON.stringify(this.options.bootstrap, null, 2));
    await Deno.remove(adminPath).catch(() => {});
    const args = [
      "-c",
      configPath,
      "--admin-address-path",
      adminPath,
      "--use-dynamic-base-id",
      "--log-level",
      this.options.logLevel ?? "warning",
      "--log-format",
      "[%Y-%m-%d %T.%e][%l][%n] %v",
      ...(this.options.extraArgs ?? []),
    ];
    const log = this.options.logger;
    log.info("starting envoy", { binary: this.options.binary, config: configPath });
    this.#child = new Deno.Command(this.options.binary, { args, stdout: "piped", stderr: "piped" })
      .spawn();
    this.#pipeLogs(this.#child.stdout);
    this.#pipeLogs(this.#child.stderr);
    const child = this.#child;
    this.#exited = child.status;
    child.status.then((status) => {
      if (this.#stopping || this.#child !== child) return;
      log.error("envoy exited", { code: status.code, signal: status.signal });
      if (this.options.restart === false) return;
      const delay = Math.min(30000, 500 * 2 ** this.#restarts++);
      setTimeout(() => {
        if (!this.#stopping) {
          this.start().catch((e) => log.error("envoy restart failed", { error: String(e) }));
        }
      }, delay);
    });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const addr = await Deno.readTextFile(adminPath).catch(() => "");
      if (addr.trim()) {
        this.adminAddress = addr.trim();
        try {
          const res = await fetch(`http://${this.adminAddress}/ready`);
          await res.body?.cancel();
          this.#restarts = 0;
          return;
        } catch { /* not yet */ }
      }
      const early = await Promise.race([
        child.status,
        new Promise((r) => setTimeout(r, 50, "wait")),
      ]);
      if (early !== "wait") {
        throw new Error(`envoy exited during start-up: ${JSON.stringify(early)}`);
      }
    }
    throw new Error(`envoy did not come up within ${timeoutMs} ms`);
  }

  /** Fetches a path from Envoy's admin endpoint and returns the body text. */
  async admin(path: string): Promise<string> {
    if (!this.adminAddress) throw new Error("envoy is not running");
    const res = await fetch(`http://${this.adminAddress}${path}`);
    return await res.text();
  }

  async #pipeLogs(stream: ReadableStream<Uint8Array>): Promise<void> {
    const log = this.options.logger;
    let buffered = "";
    try {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        buffered += chunk;
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          if (!line.trim()) continue;
          const level = /\]\[(critical|error)\]/.test(line)
            ? "error"
            : /\]\[warning\]/.test(line)
            ? "warn"
            : "info";
          log[level]("envoy", { line });
        }
      }
    } catch { /* stream closed */ }
  }

  /** Stops Envoy (SIGTERM, then SIGKILL after 3 s) and removes its temp files. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const child = this.#child;
    if (child) {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 3000);
      await this.#exited;
      clearTimeout(timer);
    }
    if (this.#dir) await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }
}
