/**
 * Cluster A's bare mirror for bench/mcs_eds.ts, in a Worker: a RegistryMirror on the same etcd
 * in a thread of its own, so the time a change reaches a mirror is taken where no agent work
 * (resolve, translate, encode on the bench's main thread) can delay it.
 *
 * Messages in: `{ url }` (start; answers `{ started }`), then `{ origin, key, value }` (answers
 * `{ at }`, `performance.timeOrigin + performance.now()` when the mirror holds `value` under
 * `key` of origin `origin`), `{ stop: true }`.
 * @module
 */
/// <reference lib="deno.worker" />
import { Logger } from "../lib/log/mod.ts";
import { Counter, Gauge } from "../lib/metrics/mod.ts";
import { EtcdKv, RegistryMirror } from "../lib/registry/mod.ts";

/** What the main thread waits for. */
interface Armed {
  origin: string;
  key: string;
  value: string;
}

const now = () => performance.timeOrigin + performance.now();

/** The worker's one mirror and what the main thread waits for, owned by this closure. */
function serve(): void {
  let mirror: RegistryMirror | undefined;
  let armed: Armed | undefined;
  const check = () => {
    if (!armed || mirror?.origin(armed.origin)?.entries.get(armed.key) !== armed.value) return;
    armed = undefined;
    self.postMessage({ at: now() });
  };
  self.onmessage = async (e: MessageEvent) => {
    const m = e.data;
    if (m.url) {
      const counter = () => new Counter("bench", "");
      mirror = new RegistryMirror({
        kv: new EtcdKv({ url: m.url }),
        logger: new Logger("bench.mirror", undefined, "warn"),
        metrics: {
          up: new Gauge("up", ""),
          relists: counter(),
          errors: counter(),
          changes: counter(),
        },
        onChange: check,
      });
      await mirror.start();
      self.postMessage({ started: true });
    } else if (m.key) {
      armed = m as Armed;
      check();
    } else if (m.stop) {
      mirror?.stop();
      self.close();
    }
  };
}

serve();
