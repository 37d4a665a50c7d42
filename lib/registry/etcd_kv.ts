/**
 * The registry store on etcd v3 through its JSON gateway (`/v3/*`, served by etcd 3.4+ on the
 * client URL): plain `fetch` over HTTP/1.1, no gRPC client. Keys and values travel base64, int64
 * fields as JSON strings; a watch is one long POST whose body is newline-separated results.
 * Every unary call has a deadline, so a hung etcd is an error, not a stuck caller.
 * @module
 */
import {
  type KeyValue,
  type KvEvent,
  type KvGuard,
  type KvOp,
  MAX_TXN_OPS,
  prefixEnd,
  type RangeResult,
  type RegistryKv,
  type TxnResult,
  type WatchHandle,
  type WatchHandlers,
} from "./kv.ts";

/** Options of the etcd backend. */
export interface EtcdKvOptions {
  /** etcd's client URL, e.g. http://127.0.0.1:2379. */
  url: string;
  /** Deadline of one unary call (default 5 s). */
  timeoutMs?: number;
  /** Keys per range call (default 2,000). */
  pageSize?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function b64(s: string): string {
  let bin = "";
  for (const byte of encoder.encode(s)) bin += String.fromCharCode(byte);
  return btoa(bin);
}

function unb64(s: string | undefined): string {
  if (!s) return "";
  const bin = atob(s);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return decoder.decode(bytes);
}

function int(s: unknown): number {
  const n = Number(s ?? 0);
  return Number.isFinite(n) ? n : 0;
}

interface RawKv {
  key?: string;
  value?: string;
  mod_revision?: string;
  lease?: string;
}

function toKv(raw: RawKv): KeyValue {
  return {
    key: unb64(raw.key),
    value: unb64(raw.value),
    modRevision: int(raw.mod_revision),
    lease: raw.lease && raw.lease !== "0" ? raw.lease : "",
  };
}

function toEvent(raw: { type?: string; kv?: RawKv }): KvEvent {
  const kv = toKv(raw.kv ?? {});
  return raw.type === "DELETE"
    ? { type: "delete", key: kv.key, modRevision: kv.modRevision }
    : { type: "put", kv };
}

function opJson(op: KvOp): unknown {
  if ("put" in op) {
    return {
      request_put: {
        key: b64(op.put),
        value: b64(op.value),
        ...(op.lease ? { lease: op.lease } : {}),
      },
    };
  }
  return { request_delete_range: { key: b64(op.delete) } };
}

function guardJson(guard: KvGuard): unknown {
  return "absent" in guard
    ? { key: b64(guard.key), target: "CREATE", result: "EQUAL", create_revision: "0" }
    : {
      key: b64(guard.key),
      target: "MOD",
      result: "EQUAL",
      mod_revision: String(guard.modRevision),
    };
}

/** A RegistryKv on one etcd member's JSON gateway. */
export class EtcdKv implements RegistryKv {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #pageSize: number;
  constructor(opts: EtcdKvOptions) {
    this.#url = opts.url.replace(/\/+$/, "");
    this.#timeoutMs = opts.timeoutMs ?? 5000;
    this.#pageSize = opts.pageSize ?? 2000;
  }

  // deno-lint-ignore no-explicit-any
  async #call(path: string, body: unknown): Promise<any> {
    let res: Response;
    try {
      res = await fetch(`${this.#url}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (e) {
      throw new Error(
        `registry etcd at ${this.#url} did not answer ${path} (${(e as Error).message}); ` +
          "check that etcd runs and that --registry-url points at its client URL",
      );
    }
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(
        `registry etcd ${path} answered HTTP ${res.status} with non-JSON: ${text.slice(0, 200)}`,
      );
    }
    if (!res.ok || json.error) {
      throw new Error(`registry etcd ${path} failed: ${json.message ?? json.error ?? res.status}`);
    }
    return json;
  }

  /**
   * Every key under `prefix`, read in pages of {@link EtcdKvOptions.pageSize} keys at the first
   * page's revision (one consistent snapshot; each call stays well inside the deadline however
   * large the registry grows).
   */
  async range(prefix: string): Promise<RangeResult> {
    const end = b64(prefixEnd(prefix));
    const kvs: KeyValue[] = [];
    let from = prefix, revision = 0;
    for (;;) {
      const json = await this.#call("/v3/kv/range", {
        key: b64(from),
        range_end: end,
        limit: String(this.#pageSize),
        ...(revision ? { revision: String(revision) } : {}),
      });
      revision ||= int(json.header?.revision);
      const page = (json.kvs ?? []).map(toKv);
      kvs.push(...page);
      if (!json.more || page.length === 0) return { kvs, revision };
      from = page[page.length - 1].key + "\u0000";
    }
  }

  async grant(ttlSeconds: number): Promise<string> {
    const json = await this.#call("/v3/lease/grant", { TTL: String(ttlSeconds) });
    if (!json.ID) throw new Error(`registry etcd granted no lease: ${JSON.stringify(json)}`);
    return String(json.ID);
  }

  async keepAlive(lease: string): Promise<number> {
    const json = await this.#call("/v3/lease/keepalive", { ID: lease });
    return int(json.result?.TTL);
  }

  async revoke(lease: string): Promise<void> {
    await this.#call("/v3/lease/revoke", { ID: lease });
  }

  async txn(guard: KvGuard | undefined, ops: KvOp[]): Promise<TxnResult> {
    if (ops.length > MAX_TXN_OPS) {
      throw new Error(
        `a registry transaction carries at most ${MAX_TXN_OPS} ops, not ${ops.length}`,
      );
    }
    const json = await this.#call("/v3/kv/txn", {
      compare: guard ? [guardJson(guard)] : [],
      success: ops.map(opJson),
    });
    return { succeeded: json.succeeded === true, revision: int(json.header?.revision) };
  }

  async compact(revision: number): Promise<void> {
    await this.#call("/v3/kv/compaction", { revision: String(revision), physical: true });
  }

  watch(prefix: string, fromRevision: number, handlers: WatchHandlers): WatchHandle {
    const abort = new AbortController();
    let ended = false;
    const end = (f: () => void) => {
      if (ended) return;
      ended = true;
      abort.abort();
      f();
    };
    const onResult = (result: Record<string, unknown>) => {
      if (result.canceled) {
        const compacted = int(result.compact_revision);
        if (compacted > 0) end(() => handlers.onCompacted(compacted));
        else {end(() =>
            handlers.onError(new Error(`registry watch canceled: ${result.cancel_reason ?? ""}`))
          );}
        return;
      }
      const events = (result.events as { type?: string; kv?: RawKv }[] | undefined) ?? [];
      if (events.length > 0) handlers.onEvents(events.map(toEvent));
    };
    (async () => {
      const res = await fetch(`${this.#url}/v3/watch`, {
        method: "POST",
        body: JSON.stringify({
          create_request: {
            key: b64(prefix),
            range_end: b64(prefixEnd(prefix)),
            start_revision: String(fromRevision),
          },
        }),
        signal: abort.signal,
      });
      if (!res.ok || !res.body) throw new Error(`registry watch answered HTTP ${res.status}`);
      let buffered = "";
      for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
        buffered += chunk;
        let nl;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line === "") continue;
          const msg = JSON.parse(line);
          if (msg.error) {
            throw new Error(`registry watch failed: ${msg.error.message ?? msg.error}`);
          }
          onResult(msg.result ?? {});
          if (ended) return;
        }
      }
      throw new Error("registry watch stream ended (etcd closed it)");
    })().catch((e) => end(() => handlers.onError(e as Error)));
    return { cancel: () => end(() => {}) };
  }
}
