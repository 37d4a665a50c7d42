/**
 * Runs the agent's Envoy so that it outlives the agent: in its own session (setsid), writing its
 * own log file in the state directory, recorded there (pid, start time, admin and xDS address,
 * bootstrap). A restarted agent finds the recorded Envoy, proves it is that process running that
 * bootstrap, and adopts it instead of starting a second one; Envoy reconnects to the xDS server at
 * the same address and is resynced with the same resource versions, so nothing changes in it.
 * Envoy that exits is started again with back-off. `stop()` stops it unless asked to keep it.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import { LogTail } from "./log_tail.ts";
import {
  type EnvoyRecord,
  isSameProcess,
  processCommandLine,
  processStartTime,
  readRecord,
  statePaths,
  writeRecord,
} from "./state.ts";

/** Options for EnvoyProcess. */
export interface EnvoyProcessOptions {
  /** Path of the envoy binary. */
  binary: string;
  /** The bootstrap config (an object, written as JSON). */
  bootstrap: Record<string, unknown>;
  /** The state directory (created by the caller). */
  stateDir: string;
  /** The xDS address the bootstrap dials (recorded, so a restarted agent listens there again). */
  xdsAddress: string;
  logger: Logger;
  /** Envoy's log level (default "warning"). */
  logLevel?: string;
  /** Extra command-line arguments. */
  extraArgs?: string[];
  /** Restart Envoy when it exits unexpectedly (default true). */
  restart?: boolean;
  /**
   * Let Envoy outlive the agent (default true): its own session, a waiting `sh` as its parent.
   * False (a temporary state directory nobody could adopt from): a plain child, which Envoy
   * leaves when the agent dies.
   */
  outlive?: boolean;
}

/** The recorded Envoy of a state directory, if that very process is still running. */
export async function recordedEnvoy(stateDir: string): Promise<EnvoyRecord | undefined> {
  const paths = statePaths(stateDir);
  const rec = await readRecord<EnvoyRecord>(paths.envoy);
  if (!rec || !await isSameProcess(rec)) return undefined;
  const args = await processCommandLine(rec.pid);
  // That pid runs the recorded Envoy binary with this directory's bootstrap.
  return args[0] === rec.binary && args.includes(paths.bootstrap) ? rec : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A supervised Envoy (started by this agent or adopted from a previous one). */
export class EnvoyProcess {
  #child?: Deno.ChildProcess;
  #pid?: number;
  #stopping = false;
  #restarts = 0;
  #watch?: ReturnType<typeof setInterval>;
  #tail?: LogTail;
  /** Envoy's admin address (`host:port`), known once Envoy is up. */
  adminAddress?: string;
  /** Whether the running Envoy was adopted from a previous agent. */
  adopted = false;

  constructor(readonly options: EnvoyProcessOptions) {}

  /** Envoy's pid, once running. */
  get pid(): number | undefined {
    return this.#pid;
  }

  /**
   * Adopts the recorded Envoy when it runs this bootstrap, else starts one; waits until it answers.
   * `onLaunched` is called once the Envoy process exists (spawned or adopted), before it answers.
   */
  async start(timeoutMs = 15000, onLaunched?: () => void): Promise<void> {
    const paths = statePaths(this.options.stateDir);
    const log = this.options.logger;
    const bootstrap = JSON.stringify(this.options.bootstrap, null, 2) + "\n";
    const rec = await recordedEnvoy(this.options.stateDir);
    if (rec) {
      const same = (await Deno.readTextFile(paths.bootstrap).catch(() => "")) === bootstrap;
      // A record without an admin address: the last agent died while its Envoy was starting.
      const admin = same ? await this.#recordedAdmin(rec, timeoutMs) : undefined;
      if (admin) {
        this.#pid = rec.pid;
        this.adminAddress = admin;
        this.adopted = true;
        if (!rec.adminAddress) await writeRecord(paths.envoy, { ...rec, adminAddress: admin });
        onLaunched?.();
        log.info("adopted the running envoy", { pid: rec.pid, admin });
        await this.#follow();
        this.#supervise();
        return;
      }
      log.warn(
        same
          ? "the recorded envoy does not answer on its admin address; replacing it"
          : "the running envoy has another bootstrap (flags changed); replacing it",
        { pid: rec.pid },
      );
      await this.#terminate(rec.pid);
    }
    await this.#stopUnrecorded();
    await this.#cleanRecords();
    await this.#spawn(bootstrap, timeoutMs, onLaunched);
  }

  /**
   * Stops an Envoy of this state directory that was never recorded: its keeper wrote its pid, but
   * the agent died before reading it. Its xDS port is not known, so it is replaced, not adopted.
   */
  async #stopUnrecorded(): Promise<void> {
    const paths = statePaths(this.options.stateDir);
    const pid = Number((await Deno.readTextFile(`${paths.envoy}.pid`).catch(() => "")).trim());
    if (!pid || !(await processCommandLine(pid)).includes(paths.bootstrap)) return;
    this.options.logger.warn("an unrecorded envoy of this state directory runs; replacing it", {
      pid,
    });
    await this.#terminate(pid);
  }

  /**
   * The admin address of a recorded Envoy that answers there: the recorded one, or — for a record
   * written before Envoy answered — the address Envoy writes to its admin address file, waited for
   * up to `timeoutMs`.
   */
  async #recordedAdmin(rec: EnvoyRecord, timeoutMs: number): Promise<string | undefined> {
    if (rec.adminAddress) {
      return await this.#answers(rec.adminAddress) ? rec.adminAddress : undefined;
    }
    const file = statePaths(this.options.stateDir).adminAddress;
    const deadline = Date.now() + timeoutMs;
    while (await isSameProcess(rec)) {
      const addr = (await Deno.readTextFile(file).catch(() => "")).trim();
      if (addr && await this.#answers(addr)) return addr;
      if (Date.now() >= deadline) return undefined;
      await sleep(50);
    }
    return undefined;
  }

  async #answers(adminAddress: string): Promise<boolean> {
    try {
      const res = await fetch(`http://${adminAddress}/ready`, {
        signal: AbortSignal.timeout(3000),
      });
      await res.body?.cancel();
      return true;
    } catch {
      return false;
    }
  }

  async #cleanRecords(): Promise<void> {
    const paths = statePaths(this.options.stateDir);
    for (const p of [paths.envoy, paths.adminAddress]) await Deno.remove(p).catch(() => {});
  }

  async #spawn(bootstrap: string, timeoutMs: number, onLaunched?: () => void): Promise<void> {
    const paths = statePaths(this.options.stateDir);
    const log = this.options.logger;
    await Deno.writeTextFile(paths.bootstrap, bootstrap, { mode: 0o600 });
    await Deno.remove(paths.adminAddress).catch(() => {});
    const args = [
      "-c",
      paths.bootstrap,
      "--admin-address-path",
      paths.adminAddress,
      "--use-dynamic-base-id",
      "--log-level",
      this.options.logLevel ?? "warning",
      "--log-format",
      "[%Y-%m-%d %T.%e][%l][%n] %v",
      "--log-path",
      paths.log,
      ...(this.options.extraArgs ?? []),
    ];
    log.info("starting envoy", { binary: this.options.binary, stateDir: this.options.stateDir });
    await this.#follow();
    // Its own session (setsid) and no pipes: Envoy neither gets the agent's terminal signals nor
    // blocks on or dies with a pipe. Envoy also exits when its parent process dies (measured: a
    // SIGTERM right after the agent's kill -9), so its parent is a tiny `sh` that only waits for
    // it and outlives the agent.
    const pidFile = `${paths.envoy}.pid`;
    await Deno.remove(pidFile).catch(() => {});
    const child = this.options.outlive === false
      ? new Deno.Command(this.options.binary, {
        args,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn()
      : new Deno.Command("sh", {
        args: [
          "-c",
          '"$0" "$@" & echo $! > "$AETHER_ENVOY_PID_FILE"; wait $!',
          this.options.binary,
          ...args,
        ],
        env: { AETHER_ENVOY_PID_FILE: pidFile },
        stdin: "null",
        stdout: "null",
        stderr: "null",
        detached: true,
      }).spawn();
    if (this.options.outlive === false) await Deno.writeTextFile(pidFile, String(child.pid));
    this.#child = child;
    this.#pid = undefined;
    this.adopted = false;
    onLaunched?.();
    let exited: Deno.CommandStatus | undefined;
    child.status.then((s) => (exited = s));
    const deadline = Date.now() + timeoutMs;
    let pid = 0;
    // Checked once more after the deadline: a long synchronous step elsewhere in the agent (a
    // big config's first translation runs while Envoy starts) must not count as Envoy's time.
    for (let last = false; !last;) {
      last = Date.now() >= deadline;
      pid ||= Number((await Deno.readTextFile(pidFile).catch(() => "")).trim()) || 0;
      if (pid && this.#pid !== pid) {
        this.#pid = pid;
        // Recorded at once, without its admin address, and only then is the pid file removed:
        // an agent killed at any point here leaves the record or the pid file, so the next one
        // adopts (or stops) this Envoy instead of starting a second one beside it.
        await writeRecord(paths.envoy, await this.#record(pid, ""));
        await Deno.remove(pidFile).catch(() => {});
      }
      if (exited) {
        throw new Error(
          `envoy exited during start-up (${JSON.stringify(exited)}); see ${paths.log}`,
        );
      }
      const addr = (await Deno.readTextFile(paths.adminAddress).catch(() => "")).trim();
      if (pid && addr && await this.#answers(addr)) {
        this.adminAddress = addr;
        await writeRecord(paths.envoy, await this.#record(pid, addr));
        this.#restarts = 0;
        this.#supervise();
        return;
      }
      if (!last) await sleep(50);
    }
    if (pid) await this.#terminate(pid);
    throw new Error(`envoy did not come up within ${timeoutMs} ms; see ${paths.log}`);
  }

  async #record(pid: number, adminAddress: string): Promise<EnvoyRecord> {
    return {
      pid,
      startTime: (await processStartTime(pid)) ?? "",
      binary: this.options.binary,
      adminAddress,
      xdsAddress: this.options.xdsAddress,
      startedAt: new Date().toISOString(),
    };
  }

  async #follow(): Promise<void> {
    if (this.#tail) return;
    this.#tail = new LogTail(statePaths(this.options.stateDir).log, this.options.logger);
    await this.#tail.start();
  }

  /** Watches the Envoy (child status, or /proc for an adopted one) and restarts it when it dies. */
  #supervise(): void {
    const pid = this.#pid!;
    const onExit = (detail: Record<string, unknown>) => {
      if (this.#stopping || this.#pid !== pid) return;
      clearInterval(this.#watch);
      const log = this.options.logger;
      log.error("envoy exited", { pid, ...detail });
      if (this.options.restart === false) return;
      const delay = Math.min(30000, 500 * 2 ** this.#restarts++);
      setTimeout(() => {
        if (this.#stopping) return;
        this.#cleanRecords()
          .then(() => this.#spawn(JSON.stringify(this.options.bootstrap, null, 2) + "\n", 15000))
          .catch((e) => log.error("envoy restart failed", { error: String(e) }));
      }, delay);
    };
    // Our own Envoy: its keeper `sh` exits with it, with its status.
    const child = this.#child;
    if (child && !this.adopted) {
      child.status.then((s) => onExit({ code: s.code, signal: s.signal }));
      return;
    }
    this.#watch = setInterval(async () => {
      if (!await processStartTime(pid)) onExit({ adopted: true });
    }, 500);
  }

  /** SIGTERM, then SIGKILL after 3 s; waits until the process is gone. */
  async #terminate(pid: number): Promise<void> {
    const child = this.adopted ? undefined : this.#child;
    const gone = async () => !(await processStartTime(pid));
    try {
      Deno.kill(pid, "SIGTERM");
    } catch { /* already gone */ }
    const deadline = Date.now() + 3000;
    while (!await gone() && Date.now() < deadline) await sleep(25);
    if (!await gone()) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    if (child) await child.status;
    else while (!await gone()) await sleep(25);
  }

  /** Fetches a path from Envoy's admin endpoint and returns the body text. */
  async admin(path: string): Promise<string> {
    if (!this.adminAddress) throw new Error("envoy is not running");
    const res = await fetch(`http://${this.adminAddress}${path}`);
    return await res.text();
  }

  /**
   * Stops supervising. Without `keep`, stops Envoy (SIGTERM, SIGKILL after 3 s) and removes its
   * records (the log stays); with `keep`, leaves it running for the next agent to adopt. With
   * `drainMs`, Envoy drains first: its listeners drain gracefully (HTTP connections are told to
   * close, new connections still accepted) for that long, then it is stopped.
   */
  async stop(opts: { keep?: boolean; drainMs?: number } = {}): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#watch);
    this.#tail?.stop();
    const pid = this.#pid;
    if (pid === undefined) return;
    if (opts.keep) {
      this.options.logger.info("leaving envoy running for the next agent", { pid });
      this.#child?.unref();
      return;
    }
    if (opts.drainMs && this.adminAddress) {
      this.options.logger.info("draining envoy before it stops", { pid, ms: opts.drainMs });
      try {
        const res = await fetch(`http://${this.adminAddress}/drain_listeners?graceful`, {
          method: "POST",
          signal: AbortSignal.timeout(2000),
        });
        await res.body?.cancel();
        await sleep(opts.drainMs);
      } catch (e) {
        this.options.logger.warn("envoy did not take the drain; stopping it", {
          error: (e as Error).message,
        });
      }
    }
    await this.#terminate(pid);
    const paths = statePaths(this.options.stateDir);
    for (const p of [paths.envoy, paths.adminAddress, paths.bootstrap]) {
      await Deno.remove(p).catch(() => {});
    }
  }
}
