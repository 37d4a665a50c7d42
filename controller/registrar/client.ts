/**
 * A SPIRE server Entry API client on the server's private unix socket (`socket_path` of
 * spire-server, default `/tmp/spire-server/private/api.sock`; the socket's file permissions are
 * its only guard, so plaintext and no credentials). Lists every entry page by page, and creates,
 * updates and deletes in batches, checking each item's status.
 *
 * One instance is one gRPC channel. The registrar opens one per reconcile pass and closes it,
 * so a pass after a spire-server restart dials afresh instead of waiting out the channel's own
 * reconnect backoff.
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type { ActualEntry, EntrySpec } from "./entries.ts";
import {
  type BatchDeleteRequest,
  type BatchDeleteResponse,
  type BatchEntriesRequest,
  type BatchEntriesResponse,
  type CountEntriesRequest,
  type CountEntriesResponse,
  entryRoot,
  fromWire,
  type ListEntriesRequest,
  type ListEntriesResponse,
  toWire,
  type UnaryMethod,
  unaryMethod,
  type WireStatus,
} from "./proto.ts";

/** gRPC status codes the results are checked against. */
const OK = 0, NOT_FOUND = 5, ALREADY_EXISTS = 6;

/** Options of {@link SpireEntryClient}. */
export interface SpireEntryClientOptions {
  /** Entries per ListEntries page (default 500, the server's own page size). */
  pageSize?: number;
  /** Entries per batch call (default 500). */
  batchSize?: number;
  /** Deadline of each call in ms (default 30 000). */
  callTimeoutMs?: number;
}

/** What a batch create did. */
export interface CreateOutcome {
  created: number;
  /** ALREADY_EXISTS: an entry with the same SPIFFE ID, parent and selectors was there. */
  existed: number;
}

/** What a batch delete did. */
export interface DeleteOutcome {
  deleted: number;
  /** NOT_FOUND: already gone. */
  missing: number;
}

/** The entry operations the registrar needs (the real client, or a fake in unit tests). */
export interface EntryStore {
  listEntries(filter?: { hint?: string }): Promise<ActualEntry[]>;
  createEntries(entries: readonly EntrySpec[]): Promise<CreateOutcome>;
  updateEntries(entries: readonly ActualEntry[]): Promise<number>;
  deleteEntries(ids: readonly string[]): Promise<DeleteOutcome>;
  close(): void;
}

/** An error naming the call and the socket; `code` is the gRPC status code when there is one. */
export class SpireApiError extends Error {
  constructor(message: string, readonly code?: number) {
    super(message);
    this.name = "SpireApiError";
  }
}

/** The fields BatchUpdateEntry sets (the rest of an entry of ours never changes in place). */
const UPDATE_MASK = { x509_svid_ttl: true, admin: true, downstream: true, hint: true };

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function statusText(s: WireStatus | null): string {
  return s ? `${grpc.status[s.code] ?? s.code}: ${s.message}` : "no status";
}

/** The Entry API over one unix socket. */
export class SpireEntryClient implements EntryStore {
  readonly #client: grpc.Client;
  readonly #pageSize: number;
  readonly #batchSize: number;
  readonly #timeoutMs: number;
  readonly #methods;

  constructor(readonly socketPath: string, opts: SpireEntryClientOptions = {}) {
    this.#pageSize = opts.pageSize ?? 500;
    this.#batchSize = opts.batchSize ?? 500;
    this.#timeoutMs = opts.callTimeoutMs ?? 30_000;
    const root = entryRoot();
    this.#methods = {
      count: unaryMethod<CountEntriesRequest, CountEntriesResponse>(root, "CountEntries"),
      list: unaryMethod<ListEntriesRequest, ListEntriesResponse>(root, "ListEntries"),
      create: unaryMethod<BatchEntriesRequest, BatchEntriesResponse>(root, "BatchCreateEntry"),
      update: unaryMethod<BatchEntriesRequest, BatchEntriesResponse>(root, "BatchUpdateEntry"),
      delete: unaryMethod<BatchDeleteRequest, BatchDeleteResponse>(root, "BatchDeleteEntry"),
    };
    this.#client = new grpc.Client(`unix://${socketPath}`, grpc.credentials.createInsecure(), {
      // A page of 500 entries is far below this; a larger page size set by a caller is not.
      "grpc.max_receive_message_length": 64 << 20,
      // A channel of its own: no subchannel (with a cached failure) shared with another client.
      "grpc.use_local_subchannel_pool": 1,
    });
  }

  #call<Req, Res>(m: UnaryMethod<Req, Res>, req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(
        m.path,
        m.serialize,
        m.deserialize,
        req,
        new grpc.Metadata(),
        { deadline: Date.now() + this.#timeoutMs },
        (err, res) => {
          if (err) {
            reject(
              new SpireApiError(
                `SPIRE server ${m.path.split("/").pop()} on unix://${this.socketPath}: ` +
                  `${grpc.status[err.code] ?? err.code}: ${err.details || err.message}`,
                err.code,
              ),
            );
          } else resolve(res!);
        },
      );
    });
  }

  /** How many entries match (by hint, or all). */
  async countEntries(filter: { hint?: string } = {}): Promise<number> {
    const res = await this.#call(this.#methods.count, {
      ...(filter.hint !== undefined ? { filter: { by_hint: { value: filter.hint } } } : {}),
    });
    return res.count;
  }

  /** Every entry (by hint, or all), page by page. */
  async listEntries(filter: { hint?: string } = {}): Promise<ActualEntry[]> {
    const out: ActualEntry[] = [];
    let token = "";
    do {
      const res = await this.#call(this.#methods.list, {
        ...(filter.hint !== undefined ? { filter: { by_hint: { value: filter.hint } } } : {}),
        page_size: this.#pageSize,
        page_token: token,
      });
      for (const e of res.entries) out.push(fromWire(e));
      token = res.next_page_token;
    } while (token);
    return out;
  }

  /** Creates the entries in batches; throws on any item neither created nor already there. */
  async createEntries(entries: readonly EntrySpec[]): Promise<CreateOutcome> {
    const outcome: CreateOutcome = { created: 0, existed: 0 };
    for (const batch of chunks(entries, this.#batchSize)) {
      const res = await this.#call(this.#methods.create, {
        entries: batch.map(toWire),
        output_mask: {},
      });
      const failed: string[] = [];
      batch.forEach((e, i) => {
        const s = res.results[i]?.status ?? null;
        if (s?.code === OK) outcome.created++;
        else if (s?.code === ALREADY_EXISTS) outcome.existed++;
        else failed.push(`${e.spiffeId}: ${statusText(s)}`);
      });
      if (failed.length) {
        throw new SpireApiError(
          `SPIRE server refused ${failed.length} of ${batch.length} new entries: ` +
            failed.slice(0, 5).join("; ") + (failed.length > 5 ? "; …" : ""),
        );
      }
    }
    return outcome;
  }

  /** Sets TTL, admin, downstream and hint of each entry (by id); throws on any failed item. */
  async updateEntries(entries: readonly ActualEntry[]): Promise<number> {
    let updated = 0;
    for (const batch of chunks(entries, this.#batchSize)) {
      const res = await this.#call(this.#methods.update, {
        entries: batch.map((e) => ({ ...toWire(e), id: e.id })),
        input_mask: UPDATE_MASK,
        output_mask: {},
      });
      const failed: string[] = [];
      batch.forEach((e, i) => {
        const s = res.results[i]?.status ?? null;
        if (s?.code === OK) updated++;
        else failed.push(`${e.id} (${e.spiffeId}): ${statusText(s)}`);
      });
      if (failed.length) {
        throw new SpireApiError(
          `SPIRE server refused ${failed.length} of ${batch.length} entry updates: ` +
            failed.slice(0, 5).join("; ") + (failed.length > 5 ? "; …" : ""),
        );
      }
    }
    return updated;
  }

  /** Deletes the entries in batches; an id already gone counts as missing, not as a failure. */
  async deleteEntries(ids: readonly string[]): Promise<DeleteOutcome> {
    const outcome: DeleteOutcome = { deleted: 0, missing: 0 };
    for (const batch of chunks(ids, this.#batchSize)) {
      const res = await this.#call(this.#methods.delete, { ids: batch });
      const failed: string[] = [];
      batch.forEach((id, i) => {
        const s = res.results[i]?.status ?? null;
        if (s?.code === OK) outcome.deleted++;
        else if (s?.code === NOT_FOUND) outcome.missing++;
        else failed.push(`${id}: ${statusText(s)}`);
      });
      if (failed.length) {
        throw new SpireApiError(
          `SPIRE server refused to delete ${failed.length} of ${batch.length} entries: ` +
            failed.slice(0, 5).join("; ") + (failed.length > 5 ? "; …" : ""),
        );
      }
    }
    return outcome;
  }

  /** Closes the channel. */
  close(): void {
    this.#client.close();
  }
}
