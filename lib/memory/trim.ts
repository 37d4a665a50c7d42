/**
 * Freed native memory back to the kernel: glibc's `malloc_trim(0)` on a timer. Deno's own
 * allocations (HTTP/2 and watch-stream buffers, module sources, V8's malloc'd parts) come from
 * glibc malloc, which keeps freed chunks inside its heaps and hands back only the top of each; a
 * burst of API-server events leaves tens of MiB resident that nothing uses. `malloc_trim` releases
 * every free page of every arena (`madvise(MADV_DONTNEED)`), in well under a millisecond for an
 * agent's heaps. Measured on the local cluster's edge pod at 1,000 HTTPRoutes: 219 → 192 MiB
 * settled (docs/performance.md, issue 21).
 *
 * Where there is no glibc (musl, macOS) or no FFI permission, it does nothing and says so once at
 * debug level. `AETHER_MEMORY_TRIM_SECONDS` sets the interval (default 10; 0 turns it off).
 *
 *   const trim = startMemoryTrim({ metrics, logger }); … trim.stop();
 * @module
 */
import type { Registry } from "../metrics/mod.ts";
import type { Logger } from "../log/mod.ts";

/** The default seconds between two trims. */
export const MEMORY_TRIM_SECONDS = 10;

/** Returns free heap memory to the kernel; true when some was returned. */
export type TrimFn = () => boolean;

/** What the trimmer needs; everything but `metrics` has a default (tests inject them). */
export interface MemoryTrimOptions {
  metrics: Registry;
  logger?: Logger;
  /** Seconds between trims; default `AETHER_MEMORY_TRIM_SECONDS`, else 10. 0: off. */
  intervalSeconds?: number;
  /** The trim itself; default glibc's `malloc_trim(0)` (undefined: not available here). */
  open?: () => TrimFn | undefined;
  /** This process's resident bytes; default /proc/self/statm. */
  residentBytes?: () => number;
  /** Timers; default the global ones (unref'd: a trim never keeps the process alive). */
  setInterval?: (fn: () => void, ms: number) => number;
  clearInterval?: (id: number) => void;
}

/** A running trimmer. */
export interface MemoryTrim {
  /** Whether trims run (false: off, or no glibc/FFI here). */
  readonly active: boolean;
  /** One trim now (the timer calls this); returns the resident bytes it gave back. */
  trimNow(): number;
  stop(): void;
}

/** The interval from `AETHER_MEMORY_TRIM_SECONDS`: a number of seconds ≥ 0, else the default. */
export function trimIntervalFromEnv(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return MEMORY_TRIM_SECONDS;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) {
    throw new Error(
      `AETHER_MEMORY_TRIM_SECONDS must be a number of seconds ≥ 0 (0 turns it off), got ${value}`,
    );
  }
  return n;
}

/** glibc's `malloc_trim(0)`, or undefined where it cannot be opened. */
export function openMallocTrim(): TrimFn | undefined {
  if (Deno.build.os !== "linux") return undefined;
  try {
    const lib = Deno.dlopen("libc.so.6", {
      malloc_trim: { parameters: ["usize"], result: "i32" },
    });
    return () => lib.symbols.malloc_trim(0n) === 1;
  } catch {
    return undefined; // musl, or no --allow-ffi
  }
}

/** Resident bytes from /proc/self/statm (0 when it cannot be read). */
function statmResident(): number {
  try {
    const pages = Number(Deno.readTextFileSync("/proc/self/statm").split(" ")[1]);
    return Number.isFinite(pages) ? pages * 4096 : 0;
  } catch {
    return 0;
  }
}

/** Starts trimming every interval; counts trims and the resident bytes they returned. */
export function startMemoryTrim(o: MemoryTrimOptions): MemoryTrim {
  const seconds = o.intervalSeconds ??
    trimIntervalFromEnv(Deno.env.get("AETHER_MEMORY_TRIM_SECONDS"));
  const trim = seconds > 0 ? (o.open ?? openMallocTrim)() : undefined;
  const trims = o.metrics.counter(
    "aether_memory_trims_total",
    "Times freed native heap memory was handed back to the kernel (glibc malloc_trim).",
  );
  const returned = o.metrics.counter(
    "aether_memory_trimmed_bytes_total",
    "Resident bytes the memory trims gave back to the kernel.",
  );
  if (!trim) {
    o.logger?.debug("memory trim off", {
      reason: seconds > 0 ? "no glibc malloc_trim here" : "AETHER_MEMORY_TRIM_SECONDS=0",
    });
    return { active: false, trimNow: () => 0, stop: () => {} };
  }
  const resident = o.residentBytes ?? statmResident;
  const trimNow = () => {
    const before = resident();
    trim();
    const gone = Math.max(0, before - resident());
    trims.inc();
    if (gone > 0) returned.inc({}, gone);
    return gone;
  };
  const id = o.setInterval
    ? o.setInterval(trimNow, seconds * 1000)
    : unrefInterval(trimNow, seconds);
  return {
    active: true,
    trimNow,
    stop: () => (o.clearInterval ?? clearInterval)(id),
  };
}

/** A global interval that never keeps the process alive. */
function unrefInterval(fn: () => void, seconds: number): number {
  const id = setInterval(fn, seconds * 1000) as unknown as number;
  Deno.unrefTimer(id);
  return id;
}
