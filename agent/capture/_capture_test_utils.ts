/**
 * Test support for the capture sink: an in-memory applier (a table per netns path, netns that
 * can vanish, tables that can be tampered with, a log of calls), resolved revisions made from
 * Services and Pods by the real resolve, and a hand-driven timer.
 * @module
 */
import type { Resolved } from "../../lib/engine/mod.ts";
import { NETNS_ANNOTATION, resolve } from "../../lib/gatewayapi/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import {
  type CaptureSpec,
  type ListedTable,
  normalizeSpec,
  sameSpec,
  syncSets,
} from "../../lib/nft/mod.ts";
import type { ApplyOutcome, CaptureApplier } from "./applier.ts";
import { CaptureError } from "./ffi.ts";
import type { Every } from "./sink.ts";

/** A table the fake holds: its spec, problems a tamperer left, and a handle a replace bumps. */
interface FakeTable {
  spec: CaptureSpec;
  problems: string[];
  handle: number;
}

/** An in-memory CaptureApplier; netns paths exist unless marked gone. */
export class FakeApplier implements CaptureApplier {
  readonly tables = new Map<string, FakeTable>();
  readonly gone = new Set<string>();
  readonly calls: string[] = [];
  readonly #applied = new Map<string, CaptureSpec>();
  #handles = 0;
  closed = false;

  #check(netnsPath: string): void {
    if (this.gone.has(netnsPath)) {
      this.#applied.delete(netnsPath);
      throw new CaptureError(`netns ${netnsPath} is gone: the pod has left`, "netns-gone");
    }
  }

  apply(netnsPath: string, input: CaptureSpec, o: { replace?: boolean } = {}): ApplyOutcome {
    this.calls.push(`apply ${netnsPath}${o.replace ? " replace" : ""}`);
    this.#check(netnsPath);
    const spec = normalizeSpec(input);
    const had = this.#applied.get(netnsPath), table = this.tables.get(netnsPath);
    if (!o.replace && had && table && table.problems.length === 0) {
      if (sameSpec(had, spec)) return "unchanged";
      if (syncSets(had, spec) && sameSpec(table.spec, had)) {
        table.spec = spec;
        this.#applied.set(netnsPath, spec);
        return "synced";
      }
    }
    this.tables.set(netnsPath, { spec, problems: [], handle: ++this.#handles });
    this.#applied.set(netnsPath, spec);
    return "replaced";
  }

  read(netnsPath: string): ListedTable | undefined {
    this.calls.push(`read ${netnsPath}`);
    this.#check(netnsPath);
    const t = this.tables.get(netnsPath);
    if (!t) return undefined;
    const zero = { packets: 0, bytes: 0 };
    return {
      spec: structuredClone(t.spec),
      problems: [...t.problems],
      counters: { vips: zero, dns: zero },
      handle: t.handle,
    };
  }

  remove(netnsPath: string): void {
    this.calls.push(`remove ${netnsPath}`);
    this.#applied.delete(netnsPath);
    if (!this.gone.has(netnsPath)) this.tables.delete(netnsPath);
  }

  close(): void {
    this.closed = true;
  }
}

/** A timer driven by hand: `tick()` runs what `every` scheduled and waits for it. */
export class ManualTimer {
  readonly #fns = new Set<() => unknown>();
  readonly every: Every = (_ms, fn) => {
    this.#fns.add(fn);
    return () => this.#fns.delete(fn);
  };
  get scheduled(): number {
    return this.#fns.size;
  }
  async tick(): Promise<void> {
    await Promise.all([...this.#fns].map((fn) => fn()));
  }
}

/** A ClusterIP Service with TCP ports. */
export function service(ns: string, name: string, ips: string[], ports: number[]): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns },
    spec: {
      clusterIP: ips[0],
      clusterIPs: ips,
      ports: ports.map((port) => ({ name: `p${port}`, port, protocol: "TCP" })),
    },
  };
}

/** A running Pod on `node` with its netns path. */
export function pod(ns: string, name: string, node: string, netnsPath: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, annotations: { [NETNS_ANNOTATION]: netnsPath } },
    spec: { nodeName: node },
    status: { phase: "Running", podIP: "10.244.0.9" },
  };
}

/** What the engine hands a sink for `objects` (the real resolve). */
export function resolved(objects: KubeObject[], revision = 1): Resolved {
  return {
    input: { revision, objects, problems: [], origins: new Map() },
    result: resolve(objects, { meshDomain: "aether.internal" }),
    problems: [],
  };
}
