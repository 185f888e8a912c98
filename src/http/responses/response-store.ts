import { readdir, readFile, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import type { ChatMessage } from "../../engine/chat-types.js";
import { ensurePrivateDir } from "../../shared/private-dir.js";
import type { ResponseStoreSettings } from "../http-deps.js";
import { fsyncCreatedDirs, fsyncDir, isNotFound, writeFileAtomic } from "../../store/atomic-file.js";
import { storing } from "../../store/storage-error.js";
import type { ResponseObject } from "./response-object.js";

/** One stored response: what GET returns, its input items, and the conversation a continuation starts from. */
export interface StoredResponse {
  version: 1;
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
}

const ID = /^resp_[0-9a-f]{24}$/;

/**
 * Stored responses, one JSON file each (0600, atomic replace) in a 0700 folder, bounded by count,
 * bytes and age: the oldest go first. The index of what is there is read from the folder once,
 * on first use, then kept here; writes are serialized so the bounds hold under concurrent turns.
 */
export class ResponseStore {
  private index: Map<string, IndexEntry> | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly limits: ResponseStoreLimits,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The record, or null when unknown, malformed, or past its ttl (then it is removed). */
  async get(id: string): Promise<StoredResponse | null> {
    if (!ID.test(id)) return null;
    const index = await this.loadIndex();
    const entry = index.get(id);
    if (entry === undefined) return null;
    if (this.expired(entry)) {
      await this.serialized(() => this.remove(id));
      return null;
    }
    try {
      return JSON.parse(await readFile(this.fileOf(id), "utf8")) as StoredResponse;
    } catch (error) {
      if (!isNotFound(error)) this.logger.warn({ id, err: (error as Error).message }, "stored response unreadable");
      return null;
    }
  }

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
      const file = this.fileOf(record.response.id);
      await storing(file, () => writeFileAtomic(file, data));
      index.set(record.response.id, { bytes, storedAt: this.now() });
      await this.evict();
    });
  }

  /** true when it was there. */
  async delete(id: string): Promise<boolean> {
    if (!ID.test(id)) return false;
    return this.serialized(async () => {
      const index = await this.loadIndex();
      const entry = index.get(id);
      if (entry === undefined) return false;
      await this.remove(id);
      return !this.expired(entry);
    });
  }

  private expired(entry: IndexEntry): boolean {
    return this.now() - entry.storedAt > this.limits.ttlMs;
  }

  private fileOf(id: string): string {
    return path.join(this.limits.dir, `${id}.json`);
  }

  private async ensureFolder(): Promise<void> {
    // data_dir and this folder private (0700), as everything the runtime keeps there.
    const first = await storing(this.limits.dir, () => ensurePrivateDir(this.limits.dir, path.dirname(this.limits.dir)));
    if (first !== undefined) await fsyncCreatedDirs(this.limits.dir, first);
  }

  private async remove(id: string): Promise<void> {
    this.index?.delete(id);
    await unlink(this.fileOf(id)).catch((error: unknown) => {
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
    for (const name of names) {
      const id = name.replace(/\.json$/, "");
      const file = path.join(this.limits.dir, name);
      if (ID.test(id) && name.endsWith(".json")) {
        const info = await stat(file).catch(() => null);
        if (info !== null) index.set(id, { bytes: info.size, storedAt: info.mtimeMs });
      } else if (/^\.resp_[0-9a-f]{24}\.json\..*\.tmp$/.test(name)) {
        // A write that crashed before its rename.
        await unlink(file).catch(() => undefined);
      }
    }
    this.index ??= index;
    return this.index;
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
