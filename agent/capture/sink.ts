/**
 * The capture sink (engine sink `capture`): from each resolved revision, this node's pods (those
 * with a netns path) and the capture spec of the MeshIR (every mesh VIP:port); each pod's table
 * is applied when that pod's wanted spec changed or its last apply failed, tables of pods that
 * left are removed, and every `repairIntervalMs` each table is read back and replaced when it
 * drifted (missing, foreign pieces, other elements). One pod's failure (its netns gone) is that
 * pod's state; the others apply. Per-pod state is {@link CaptureSink.pods} (for `/debug/capture`),
 * totals are Prometheus metrics, and {@link CaptureSink.whenCaptured} is what the CNI plugin's
 * ADD waits on. {@link CaptureSink.close} leaves the tables in place; {@link CaptureSink.removeAll}
 * (an uninstall) takes them all away.
 * @module
 */
import type { Resolved, Sink } from "../../lib/engine/mod.ts";
import { podsOnNode } from "../../lib/gatewayapi/mod.ts";
import type { MeshIR, NodePod } from "../../lib/ir/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import type { Registry } from "../../lib/metrics/mod.ts";
import { type CaptureSpec, type ListedTable, sameSpec } from "../../lib/nft/mod.ts";
import type { ApplyOutcome, CaptureApplier } from "./applier.ts";
import { CaptureError } from "./ffi.ts";
import { meshCaptureSpec, type MeshSpecOptions } from "./mesh_spec.ts";
import { Waiters } from "./waiters.ts";

/** A repeating timer: calls `fn` every `ms` until the returned stop is called. */
export type Every = (ms: number, fn: () => unknown) => () => void;

/** Options of {@link CaptureSink}. */
export interface CaptureSinkOptions extends MeshSpecOptions {
  nodeName: string;
  applier: CaptureApplier;
  logger: Logger;
  metrics: Registry;
  /** Read-back and repair period; default 30 s; 0: no timer ({@link CaptureSink.repair} still works). */
  repairIntervalMs?: number;
  /** Injected timer; default setInterval. */
  every?: Every;
  /** Injected clock (ms). */
  now?: () => number;
}

/** One pod's capture, as `/debug/capture` would show it. */
export interface PodCapture {
  /** `<namespace>/<name>`. */
  key: string;
  namespace: string;
  name: string;
  netnsPath: string;
  /** `captured`: its table is what the current spec says; `failed`: see `error`. */
  state: "captured" | "failed";
  /** VIP:port entries (TCP; UDP ones redirected to their local ports) and DNS servers of the wanted spec. */
  vips: number;
  udp: number;
  dnsServers: number;
  /** How the last successful apply changed the table. */
  last?: ApplyOutcome;
  /** When (ms) the table was last applied and last read back as right. */
  appliedAt?: number;
  checkedAt?: number;
  /** Why the last apply or read failed (state `failed`). */
  error?: string;
  /** Failed applies and reads, and drift repairs, since the pod appeared. */
  failures: number;
  repairs: number;
  /** The table's rule counters at the last read back (since its last replace). */
  counters?: ListedTable["counters"];
}

interface Entry {
  pod: PodCapture;
  wanted: CaptureSpec;
}

const every: Every = (ms, fn) => {
  const id = setInterval(fn, ms);
  return () => clearInterval(id);
};

const copy = (p: PodCapture): PodCapture => structuredClone(p);

/** See the module doc. */
export class CaptureSink implements Sink {
  readonly name = "capture";
  readonly #o: CaptureSinkOptions;
  readonly #now: () => number;
  readonly #pods = new Map<string, Entry>();
  readonly #waiters = new Waiters<PodCapture>();
  readonly #stop: () => void;
  #repairing?: Promise<void>;
  #closed = false;
  #mesh?: MeshIR;
  #spec?: CaptureSpec;
  readonly #m;

  constructor(options: CaptureSinkOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    const r = options.metrics;
    this.#m = {
      pods: r.gauge("aether_capture_pods", "This node's pods by capture state."),
      vips: r.gauge("aether_capture_vips", "VIP:port entries each pod's table captures."),
      applies: r.counter(
        "aether_capture_applies_total",
        "Tables changed in pod netns, by how (replaced, synced).",
      ),
      failures: r.counter(
        "aether_capture_failures_total",
        "Failed table applies and read backs, by cause (netns-gone, netns, nft, spec).",
      ),
      repairs: r.counter(
        "aether_capture_drift_repairs_total",
        "Tables found drifted on read back and replaced.",
      ),
      removals: r.counter("aether_capture_removals_total", "Tables removed for pods that left."),
      seconds: r.histogram("aether_capture_apply_seconds", "Time to apply one pod's table."),
    };
    const ms = options.repairIntervalMs ?? 30_000;
    this.#stop = ms > 0 ? (options.every ?? every)(ms, () => this.repair()) : () => {};
  }

  /** Every pod's capture, sorted by key (copies). */
  pods(): PodCapture[] {
    return [...this.#pods.values()].map((e) => copy(e.pod)).sort((a, b) =>
      a.key < b.key ? -1 : a.key > b.key ? 1 : 0
    );
  }

  /** The spec of the served revision (every pod's wanted spec), if any. */
  spec(): CaptureSpec | undefined {
    return this.#spec && structuredClone(this.#spec);
  }

  /** One pod's capture, by `<namespace>/<name>` or netns path. */
  pod(id: string): PodCapture | undefined {
    const e = this.#find(id);
    return e && copy(e.pod);
  }

  #find(id: string): Entry | undefined {
    const e = this.#pods.get(id);
    if (e) return e;
    for (const x of this.#pods.values()) if (x.pod.netnsPath === id) return x;
    return undefined;
  }

  /**
   * Resolves once the pod (by `<namespace>/<name>` or netns path) has its table in place, at
   * once when it has. Rejects when `signal` aborts, saying why it is not in place yet, or when
   * the sink closes.
   */
  whenCaptured(id: string, signal?: AbortSignal): Promise<PodCapture> {
    const e = this.#find(id);
    return this.#waiters.wait(
      id,
      e?.pod.state === "captured" ? copy(e.pod) : undefined,
      () => this.#find(id)?.pod.error ?? "the pod is not among this node's pods yet",
      signal,
    );
  }

  apply({ input, result }: Resolved): void {
    if (this.#closed) return;
    const o = this.#o;
    // A new MeshIR object is a new revision of it; an invalid DNS option throws here, before
    // any pod is touched (the engine reports it and this sink keeps what it has).
    const spec = result.mesh === this.#mesh && this.#spec ? this.#spec : meshCaptureSpec(
      result.mesh,
      o,
    );
    this.#mesh = result.mesh;
    this.#spec = spec;
    const mine = podsOnNode(input.objects, o.nodeName);
    const keys = new Set<string>();
    for (const pod of mine) {
      const key = `${pod.namespace}/${pod.name}`;
      keys.add(key);
      let e = this.#pods.get(key);
      if (e && e.pod.netnsPath !== pod.netnsPath) {
        // A new sandbox (new netns) for the same pod: the old netns's table goes.
        this.#remove(e);
        e = undefined;
      }
      if (e && e.pod.state === "captured" && sameSpec(e.wanted, spec)) continue;
      const entry = e ?? this.#add(key, pod, spec);
      entry.wanted = spec;
      this.#applyPod(entry, false);
    }
    for (const [key, e] of this.#pods) if (!keys.has(key)) this.#remove(e);
    this.#gauges();
  }

  /**
   * Reads every table back and replaces the drifted ones; retries the failed pods. One pod at a
   * time, yielding to the event loop between pods (each read is a synchronous FFI call), so a
   * node with many pods is not blocked for all of them at once. A call while one runs joins it.
   */
  repair(): Promise<void> {
    this.#repairing ??= (async () => {
      try {
        for (const key of [...this.#pods.keys()]) {
          const e = this.#pods.get(key);
          if (this.#closed) return;
          if (!e) continue; // left while this ran
          this.#repairOne(e);
          this.#gauges();
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      } finally {
        this.#repairing = undefined;
      }
    })();
    return this.#repairing;
  }

  #repairOne(e: Entry): void {
    if (e.pod.state === "failed") {
      this.#applyPod(e, false);
      return;
    }
    let why: string | undefined;
    try {
      const t = this.#o.applier.read(e.pod.netnsPath);
      why = !t
        ? "table missing"
        : t.problems.length > 0
        ? t.problems.join("; ")
        : !sameSpec(t.spec, e.wanted)
        ? "other VIPs or targets"
        : undefined;
      if (t) e.pod.counters = t.counters;
      if (!why) e.pod.checkedAt = this.#now();
    } catch (err) {
      this.#fail(e, err);
      return;
    }
    if (!why) return;
    this.#o.logger.warn("capture table drifted; replacing it", { pod: e.pod.key, why });
    this.#m.repairs.inc();
    e.pod.repairs++;
    this.#applyPod(e, true);
  }

  /**
   * Removes every pod's table and forgets the pods (aether is being uninstalled: the node proxy's
   * capture listeners go with it, and a pod whose mesh traffic still went there would lose it);
   * revisions after it are ignored. Returns the pods whose table went, and those whose removal
   * failed (logged). {@link close} is still to be called.
   */
  removeAll(): { removed: string[]; failed: string[] } {
    this.#closed = true;
    const out = { removed: [] as string[], failed: [] as string[] };
    for (const e of this.pods().map((p) => this.#pods.get(p.key)!)) {
      (this.#remove(e) ? out.removed : out.failed).push(e.pod.key);
    }
    this.#gauges();
    return out;
  }

  /** Stops the repair timer, rejects the waiters and frees the applier; the tables stay. */
  close(): void {
    this.#closed = true;
    this.#stop();
    this.#waiters.rejectAll(new Error("capture sink closed"));
    this.#o.applier.close();
  }

  #add(key: string, pod: NodePod, spec: CaptureSpec): Entry {
    const entry: Entry = {
      wanted: spec,
      pod: {
        key,
        namespace: pod.namespace,
        name: pod.name,
        netnsPath: pod.netnsPath,
        state: "failed",
        vips: 0,
        udp: 0,
        dnsServers: 0,
        error: "not applied yet",
        failures: 0,
        repairs: 0,
      },
    };
    this.#pods.set(key, entry);
    return entry;
  }

  #applyPod(e: Entry, replace: boolean): void {
    const p = e.pod;
    p.vips = e.wanted.vips.length;
    p.udp = e.wanted.udp?.length ?? 0;
    p.dnsServers = e.wanted.dns?.servers.length ?? 0;
    const start = performance.now();
    let how: ApplyOutcome;
    try {
      how = this.#o.applier.apply(p.netnsPath, e.wanted, { replace });
    } catch (err) {
      this.#fail(e, err);
      return;
    }
    this.#m.seconds.observe((performance.now() - start) / 1000);
    if (how !== "unchanged") this.#m.applies.inc({ how });
    const first = p.state === "failed";
    Object.assign(p, { state: "captured", last: how, appliedAt: this.#now() });
    p.checkedAt = p.appliedAt;
    delete p.error;
    if (first) {
      this.#o.logger.info("capture in place", { pod: p.key, netns: p.netnsPath, how });
    } else this.#o.logger.debug("capture updated", { pod: p.key, how, vips: p.vips });
    this.#waiters.resolve([p.key, p.netnsPath], copy(p));
  }

  #fail(e: Entry, err: unknown): void {
    const p = e.pod;
    const message = err instanceof Error ? err.message : String(err);
    const code = err instanceof CaptureError ? err.code : "error";
    this.#m.failures.inc({ code });
    p.failures++;
    if (p.state !== "failed" || p.error !== message) {
      this.#o.logger.warn("capture failed", { pod: p.key, netns: p.netnsPath, error: message });
    }
    p.state = "failed";
    p.error = message;
  }

  #remove(e: Entry): boolean {
    this.#pods.delete(e.pod.key);
    try {
      this.#o.applier.remove(e.pod.netnsPath);
      this.#m.removals.inc();
      this.#o.logger.info("capture removed", { pod: e.pod.key, netns: e.pod.netnsPath });
      return true;
    } catch (err) {
      this.#m.failures.inc({ code: err instanceof CaptureError ? err.code : "error" });
      this.#o.logger.warn("capture removal failed", {
        pod: e.pod.key,
        netns: e.pod.netnsPath,
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
  }

  #gauges(): void {
    const all = [...this.#pods.values()];
    for (const state of ["captured", "failed"] as const) {
      this.#m.pods.set(all.filter((e) => e.pod.state === state).length, { state });
    }
    this.#m.vips.set(this.#spec?.vips.length ?? 0);
  }
}
