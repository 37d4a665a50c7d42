/**
 * Per-source token buckets. Each source address may send `qps` queries per second on average with
 * bursts up to `burst`. Over the limit a UDP query is dropped, except every `slip`-th one, which
 * gets an empty truncated answer (TC=1) so a real client under a spoofed flood can still get through
 * over TCP (the BIND RRL "slip" idea); a TCP query over the limit gets REFUSED. The table holds at
 * most `maxSources` buckets, evicting the least recently seen.
 * @module
 */

/** Rate limit settings; `qps: 0` disables limiting. */
export interface RateLimitOptions {
  /** Sustained queries per second per source (default 2000; 0 = unlimited). */
  qps?: number;
  /** Bucket size (default 2 × qps). */
  burst?: number;
  /** Every n-th limited UDP query is answered TC=1 instead of dropped (default 2; 0 = drop all). */
  slip?: number;
  /** Sources tracked at most (default 65536). */
  maxSources?: number;
}

/** Outcome for one query. */
export type Verdict = "allow" | "drop" | "slip";

interface Bucket {
  tokens: number;
  last: number;
  limited: number;
}

/** The per-source limiter; clock injected (milliseconds). */
export class RateLimiter {
  readonly qps: number;
  readonly burst: number;
  readonly slip: number;
  readonly #max: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(opts: RateLimitOptions = {}, now: () => number = Date.now) {
    this.qps = opts.qps ?? 2000;
    this.burst = opts.burst ?? this.qps * 2;
    this.slip = opts.slip ?? 2;
    this.#max = opts.maxSources ?? 65536;
    this.#now = now;
  }

  /** Number of tracked sources. */
  get sources(): number {
    return this.#buckets.size;
  }

  /** Takes one token for `source`. */
  check(source: string): Verdict {
    if (this.qps <= 0) return "allow";
    const now = this.#now();
    let b = this.#buckets.get(source);
    if (!b) {
      b = { tokens: this.burst, last: now, limited: 0 };
      if (this.#buckets.size >= this.#max) {
        this.#buckets.delete(this.#buckets.keys().next().value!);
      }
      this.#buckets.set(source, b);
    } else if (now > b.last) {
      b.tokens = Math.min(this.burst, b.tokens + ((now - b.last) / 1000) * this.qps);
      b.last = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return "allow";
    }
    b.limited++;
    // Move to the recent end so an active flooder is not the one evicted.
    this.#buckets.delete(source);
    this.#buckets.set(source, b);
    return this.slip > 0 && b.limited % this.slip === 0 ? "slip" : "drop";
  }
}
