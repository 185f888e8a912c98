import { readdir, readFile, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import type { ChatMessage } from "../../shared/conversation/chat-message.js";
import { ensurePrivateDir } from "../../shared/private-dir.js";
import type { ResponseStoreSettings } from "../http-deps.js";
import { fsyncCreatedDirs, fsyncDir, isNotFound, writeFileAtomic } from "../../store/atomic-file.js";
import { storing } from "../../store/storage-error.js";
import type { ResponseObject } from "./response-object.js";
import type { ResponseReader } from "./response-reader.js";

/** One stored response: what GET returns, its input items, and the conversation a continuation starts from. */
export interface StoredResponse {
  /** 2: with `owner` and `item_key`. 1: stored before responses had owners (visible to the operator only). */
  version: 1 | 2;
  /** The name of the API key that stored it ("default": the bearer token; "none": no auth); never a token. */
  owner?: string;
  /** The key its item ids carry (itemId); version 1 records' item ids carry the id's hex. */
  item_key?: string;
  response: ResponseObject;
  /** The request's input items as the API lists them (oldest first), each with an id. */
  input_items: Array<Record<string, unknown> & { id: string }>;
  /** The conversation through this response's output (system text of `instructions` excluded, as the API carries it). */
  context: ChatMessage[];
  /** The KV cache key of the conversation: a chain of previous_response_ids keeps one. */
  cache_key: string;
  /** The turn paused at an MCP call: its mcp_approval_request item and the model's call id. */
  pending_approval?: { id: string; call_id: string };
}

export type ResponseStoreLimits = ResponseStoreSettings;

interface IndexEntry {
  bytes: number;
  storedAt: number;
  /** `<id>.<item key>.json`; `<id>.json` for version 1 records. */
  file: string;
  itemKey: string;
}

const ID = /^resp_[0-9a-f]{24}$/;
const ITEM_KEY = /^[0-9a-f]{24}$/;
const FILE = /^(resp_([0-9a-f]{24}))(?:\.([0-9a-f]{24}))?\.json$/;
const CRASHED_WRITE = /^\.resp_[0-9a-f]{24}(?:\.[0-9a-f]{24})?\.json\..*\.tmp$/;

/** A key sees the responses it stored; the operator sees all, and alone those stored before owners. */
const visibleTo = (record: StoredResponse, reader: ResponseReader): boolean => reader.operator || (record.owner !== undefined && record.owner === reader.key);

/**
 * Stored responses, one JSON file each (0600, atomic replace) in a 0700 folder, bounded by count,
 * bytes and age: the oldest go first. The index of what is there is read from the folder once,
 * on first use, then kept here; writes are serialized so the bounds hold under concurrent turns.
 * A response belongs to the key that stored it: to any other reader it does not exist (null, as
 * an unknown id). The file name carries the item key, so item ids find their response after a
 * restart without a file being read.
 */
export class ResponseStore {
  private index: Map<string, IndexEntry> | null = null;
  /** item key -> response id. */
  private readonly items = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly limits: ResponseStoreLimits,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The record, or null when unknown, not the reader's, malformed, or past its ttl (then it is removed). */
  async get(id: string, reader: ResponseReader): Promise<StoredResponse | null> {
    if (!ID.test(id)) return null;
    const index = await this.loadIndex();
    const entry = index.get(id);
    if (entry === undefined) return null;
    if (this.expired(entry)) {
      await this.serialized(() => this.remove(id));
      return null;
    }
    const record = await this.read(id, entry);
    return record !== null && visibleTo(record, reader) ? record : null;
  }

  /** The response whose item ids carry `itemKey` (itemId), as get. */
  async getByItemKey(itemKey: string, reader: ResponseReader): Promise<StoredResponse | null> {
    if (!ITEM_KEY.test(itemKey)) return null;
    await this.loadIndex();
    const id = this.items.get(itemKey);
    return id === undefined ? null : this.get(id, reader);
  }

  /** `record.owner` is who may read it back (see ResponseReader). */
  async put(record: StoredResponse): Promise<void> {
    const data = JSON.stringify(record);
    const bytes = Buffer.byteLength(data);
    if (bytes > this.limits.maxBytes) {
      this.logger.warn({ id: record.response.id, bytes, max_bytes: this.limits.maxBytes }, "response larger than http.responses.max_bytes: not stored");
      return;
    }
    await this.serialized(async () => {
      const index = await this.loadIndex();
      await this.ensureFolder();
      const { id } = record.response;
      const itemKey = record.item_key ?? id.slice("resp_".length);
      const name = record.item_key === undefined ? `${id}.json` : `${id}.${itemKey}.json`;
      const file = path.join(this.limits.dir, name);
      await storing(file, () => writeFileAtomic(file, data));
      const before = index.get(id);
      if (before !== undefined && before.file !== name) await this.remove(id);
      this.track(id, { bytes, storedAt: this.now(), file: name, itemKey });
      await this.evict();
    });
  }

  /** true when it was there and the reader's (another key's response stays, as if unknown). */
  async delete(id: string, reader: ResponseReader): Promise<boolean> {
    if (!ID.test(id)) return false;
    return this.serialized(async () => {
      const index = await this.loadIndex();
      const entry = index.get(id);
      if (entry === undefined) return false;
      if (!this.expired(entry)) {
        const record = await this.read(id, entry);
        if (record !== null && !visibleTo(record, reader)) return false;
      }
      await this.remove(id);
      return !this.expired(entry);
    });
  }

  private async read(id: string, entry: IndexEntry): Promise<StoredResponse | null> {
    try {
      return JSON.parse(await readFile(path.join(this.limits.dir, entry.file), "utf8")) as StoredResponse;
    } catch (error) {
      if (!isNotFound(error)) this.logger.warn({ id, err: (error as Error).message }, "stored response unreadable");
      return null;
    }
  }

  private expired(entry: IndexEntry): boolean {
    return this.now() - entry.storedAt > this.limits.ttlMs;
  }

  private track(id: string, entry: IndexEntry): void {
    this.index?.set(id, entry);
    this.items.set(entry.itemKey, id);
  }

  private async ensureFolder(): Promise<void> {
    // data_dir and this folder private (0700), as everything the runtime keeps there.
    const first = await storing(this.limits.dir, () => ensurePrivateDir(this.limits.dir, path.dirname(this.limits.dir)));
    if (first !== undefined) await fsyncCreatedDirs(this.limits.dir, first);
  }

  private async remove(id: string): Promise<void> {
    const entry = this.index?.get(id);
    if (entry === undefined) return;
    this.index?.delete(id);
    if (this.items.get(entry.itemKey) === id) this.items.delete(entry.itemKey);
    await unlink(path.join(this.limits.dir, entry.file)).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  /** Expired records, then the oldest until both bounds hold. */
  private async evict(): Promise<void> {
    const index = await this.loadIndex();
    const entries = [...index].sort((a, b) => a[1].storedAt - b[1].storedAt);
    let count = entries.length;
    let bytes = entries.reduce((sum, [, entry]) => sum + entry.bytes, 0);
    let removed = 0;
    for (const [id, entry] of entries) {
      if (!this.expired(entry) && count <= this.limits.maxStored && bytes <= this.limits.maxBytes) break;
      await this.remove(id);
      count -= 1;
      bytes -= entry.bytes;
      removed += 1;
    }
    if (removed > 0) {
      await fsyncDir(this.limits.dir);
      this.logger.debug({ removed, stored: count, bytes }, "stored responses evicted (http.responses bounds)");
    }
  }

  private async loadIndex(): Promise<Map<string, IndexEntry>> {
    if (this.index !== null) return this.index;
    const index = new Map<string, IndexEntry>();
    let names: string[] = [];
    try {
      names = await readdir(this.limits.dir);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const items = new Map<string, string>();
    for (const name of names) {
      const file = path.join(this.limits.dir, name);
      const match = FILE.exec(name);
      if (match !== null) {
        const [, id = "", hex = "", itemKey = hex] = match;
        const info = await stat(file).catch(() => null);
        if (info !== null) {
          index.set(id, { bytes: info.size, storedAt: info.mtimeMs, file: name, itemKey });
          items.set(itemKey, id);
        }
      } else if (CRASHED_WRITE.test(name)) {
        // A write that crashed before its rename.
        await unlink(file).catch(() => undefined);
      }
    }
    if (this.index !== null) return this.index;
    this.index = index;
    for (const [key, id] of items) this.items.set(key, id);
    return this.index;
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
