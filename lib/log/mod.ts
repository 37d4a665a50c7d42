/**
 * Structured logs: one JSON object per line on stderr, with a level, a component and fields.
 * `AETHER_LOG_LEVEL` (debug|info|warn|error) sets the threshold; default info.
 * @module
 */

/** Log levels in increasing severity. */
export type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

function threshold(): Level {
  const v = (Deno.env.get("AETHER_LOG_LEVEL") ?? "info").toLowerCase();
  return v in order ? v as Level : "info";
}

/** Where log lines go; tests can capture them. */
export type Sink = (line: string) => void;
const encoder = new TextEncoder();
const stderrSink: Sink = (line) => Deno.stderr.writeSync(encoder.encode(line + "\n"));

/** A logger bound to one component. */
export class Logger {
  constructor(
    readonly component: string,
    readonly sink: Sink = stderrSink,
    readonly level: Level = threshold(),
    readonly now: () => Date = () => new Date(),
  ) {}
  /** A logger for a sub-component sharing this one's sink and level. */
  child(component: string): Logger {
    return new Logger(`${this.component}.${component}`, this.sink, this.level, this.now);
  }
  #emit(level: Level, msg: string, fields: Record<string, unknown>): void {
    if (order[level] < order[this.level]) return;
    this.sink(
      JSON.stringify({
        ts: this.now().toISOString(),
        level,
        component: this.component,
        msg,
        ...fields,
      }),
    );
  }
  debug(msg: string, fields: Record<string, unknown> = {}): void {
    this.#emit("debug", msg, fields);
  }
  info(msg: string, fields: Record<string, unknown> = {}): void {
    this.#emit("info", msg, fields);
  }
  warn(msg: string, fields: Record<string, unknown> = {}): void {
    this.#emit("warn", msg, fields);
  }
  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.#emit("error", msg, fields);
  }
}
