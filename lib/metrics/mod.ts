/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
 * Prometheus text exposition format (version 0.0.4).
 * @module
 */

type Labels = Record<string, string>;

function labelKey(labels: Labels): string {
  return Object.keys(labels).sort().map((k) => `${k}="${escapeLabel(labels[k])}"`).join(",");
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function withLabels(name: string, key: string): string {
  return key ? `${name}{${key}}` : name;
}

import type { Metric } from "./metric.ts";

export type { Metric };

/** A monotonically increasing count. */
export class Counter implements Metric {
  #values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
  /** Adds `by` (default 1) to the series with these labels. */
  inc(labels: Labels = {}, by = 1): void {
    const k = labelKey(labels);
    this.#values.set(k, (this.#values.get(k) ?? 0) + by);
  }
  /** The current value of one series (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels)) ?? 0;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of [...this.#values].sort()) lines.push(`${withLabels(this.name, k)} ${v}`);
    return lines;
  }
}

/** A value that goes up and down. */
export class Gauge implements Metric {
  #values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
  /** Sets the series with these labels. */
  set(value: number, labels: Labels = {}): void {
    this.#values.set(labelKey(labels), value);
  }
  /** The current value of one series (0 when never set). */
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels)) ?? 0;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [k, v] of [...this.#values].sort()) lines.push(`${withLabels(this.name, k)} ${v}`);
    return lines;
  }
}

/** Observations counted into cumulative buckets. */
export class Histogram implements Metric {
  #series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[] = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  ) {}
  /** Records one observation (in the histogram's unit, seconds by convention). */
  observe(value: number, labels: Labels = {}): void {
    const k = labelKey(labels);
    let s = this.#series.get(k);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) s.counts[i]++;
    s.sum += value;
    s.count++;
  }
  /** Number of observations of one series. */
  count(labels: Labels = {}): number {
    return this.#series.get(labelKey(labels))?.count ?? 0;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of [...this.#series].sort(([a], [b]) => a.localeCompare(b))) {
      const sep = k ? "," : "";
      this.buckets.forEach((b, i) =>
        lines.push(`${this.name}_bucket{${k}${sep}le="${b}"} ${s.counts[i]}`)
      );
      lines.push(`${this.name}_bucket{${k}${sep}le="+Inf"} ${s.count}`);
      lines.push(`${withLabels(this.name + "_sum", k)} ${s.sum}`);
      lines.push(`${withLabels(this.name + "_count", k)} ${s.count}`);
    }
    return lines;
  }
}

/** A set of metrics rendered together on `/metrics`. */
export class Registry {
  #metrics = new Map<string, Metric>();
  #register<M extends Metric>(m: M): M {
    const existing = this.#metrics.get(m.name);
    if (existing) return existing as M;
    this.#metrics.set(m.name, m);
    return m;
  }
  /**
   * Adds a metric of its own kind (e.g. one read at render time, like the process metrics);
   * returns the one already registered under its name, if any.
   */
  register<M extends Metric>(m: M): M {
    return this.#register(m);
  }
  /** Returns the counter with this name, creating it once. */
  counter(name: string, help: string): Counter {
    return this.#register(new Counter(name, help));
  }
  /** Returns the gauge with this name, creating it once. */
  gauge(name: string, help: string): Gauge {
    return this.#register(new Gauge(name, help));
  }
  /** Returns the histogram with this name, creating it once. */
  histogram(name: string, help: string, buckets?: number[]): Histogram {
    return this.#register(new Histogram(name, help, buckets));
  }
  /** Prometheus text exposition of every metric. */
  render(): string {
    return [...this.#metrics.values()].flatMap((m) => m.render()).join("\n") + "\n";
  }
}

export {
  addProcessMetrics,
  denoProcessReader,
  ProcessMetrics,
  type ProcessReader,
  type ProcessSample,
} from "./process.ts";
