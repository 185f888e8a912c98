import type { Llama, LlamaContextSequence, Token } from "node-llama-cpp";
import type { Logger } from "pino";
import { CONTINUATION, sameTokens, sharedPrefix } from "./sequence-pool.js";
import { adoptLegacyDir, KvStateFiles, modelIdentity, type ModelIdentity } from "./kv-state-files.js";

export interface KvCacheSettings {
  dir: string;
  /** Where an earlier version kept this model's states (moved to `dir` on first use), or null. */
  legacyDir?: string | null;
  diskBytes: number;
}

/**
 * The keeper for a loaded model, or null: kv_cache_disk_bytes 0, or a model whose state cannot be
 * cut back to a prefix (recurrent, sliding-window), which relies on in-memory checkpoints that
 * node-llama-cpp does not save to disk.
 */
export async function createKvKeeper(
  settings: KvCacheSettings | undefined,
  modelPath: string,
  llama: Llama,
  sequences: readonly LlamaContextSequence[],
  parentLogger: Logger,
): Promise<KvKeeper | null> {
  if (settings === undefined || settings.diskBytes === 0) return null;
  if (sequences.some((sequence) => sequence.needsCheckpoints)) return null;
  const logger = parentLogger.child({ component: "kv-cache" });
  if (settings.legacyDir) await adoptLegacyDir(settings.legacyDir, settings.dir, logger);
  return new KvKeeper(new KvStateFiles(settings.dir, settings.diskBytes, logger), await modelIdentity(modelPath, llama), logger);
}

/** What a sequence holds for whom, and whether that is already on disk. */
interface Holding {
  /** The conversation (cache key) whose tokens the sequence holds; undefined: nobody's. */
  owner: string | undefined;
  /** The tokens last saved or restored for `owner`: saving them again would change nothing. */
  onDisk: readonly Token[] | null;
}

/**
 * Lets a conversation's KV state outlive its sequence. When a sequence is handed to another
 * conversation (evicted) or the engine closes, the state it holds is saved for its owner; when a
 * conversation's next turn gets a sequence that does not hold it (it was evicted, or the process
 * restarted), its saved state is restored first, so the turn evaluates only what is new.
 *
 * Restoring is only worth it when the saved tokens are what the new prompt continues (the same
 * CONTINUATION rule the pool uses) and more of the prompt than the sequence already holds.
 */
export class KvKeeper {
  private readonly holdings = new Map<LlamaContextSequence, Holding>();
  private closed = false;

  constructor(
    private readonly files: KvStateFiles,
    private readonly identity: ModelIdentity,
    private readonly logger: Logger,
  ) {}

  /**
   * Called with a sequence just taken from the pool, before the chat evaluates on it. `prompt`
   * renders the tokens the chat will evaluate (only called when a saved state is found).
   */
  async prepare(sequence: LlamaContextSequence, cacheKey: string | undefined, prompt: () => readonly Token[] | undefined): Promise<void> {
    const holding = this.holdingOf(sequence);
    if (this.closed || (cacheKey !== undefined && holding.owner === cacheKey)) return;
    // The evicted conversation's state is written before the sequence changes hands; the rest of
    // its save finishes in the background (KvStateFiles.save).
    await this.saveIfNeeded(sequence, holding, true);
    holding.owner = cacheKey;
    holding.onDisk = null;
    if (cacheKey === undefined) return;
    const saved = await this.files.find(cacheKey, this.identity);
    if (saved === null) return;
    const tokens = prompt();
    if (tokens !== undefined) {
      const shared = sharedPrefix(saved.tokens, tokens);
      if (shared < saved.tokens.length * CONTINUATION || shared <= sharedPrefix(sequence.contextTokens, tokens)) {
        this.logger.debug({ key: cacheKey, saved: saved.tokens.length, shared }, "kv state not restored: the prompt does not continue it");
        return;
      }
    }
    if (await this.files.load(saved, sequence)) holding.onDisk = saved.tokens;
  }

  /** A deleted conversation: its sequence is no longer saved for it, and its saved state is removed. */
  async forget(cacheKey: string): Promise<void> {
    for (const holding of this.holdings.values()) {
      if (holding.owner !== cacheKey) continue;
      holding.owner = undefined;
      holding.onDisk = null;
    }
    await this.files.remove(cacheKey);
  }

  /** Saves every sequence's state that is not on disk yet (the engine is closing; the caller disposes after). */
  async saveAll(sequences: readonly LlamaContextSequence[]): Promise<void> {
    this.closed = true;
    for (const sequence of sequences) {
      const holding = this.holdings.get(sequence);
      if (holding !== undefined) await this.saveIfNeeded(sequence, holding, false);
    }
    // Saves of evicted conversations still finishing in the background: the process may exit next.
    await this.files.settled();
  }

  private async saveIfNeeded(sequence: LlamaContextSequence, holding: Holding, background: boolean): Promise<void> {
    if (holding.owner === undefined || sequence.contextTokens.length === 0) return;
    if (holding.onDisk !== null && sameTokens(holding.onDisk, sequence.contextTokens)) return;
    const tokens = [...sequence.contextTokens];
    if (await this.files.save(holding.owner, sequence, this.identity, { background })) holding.onDisk = tokens;
  }

  private holdingOf(sequence: LlamaContextSequence): Holding {
    let holding = this.holdings.get(sequence);
    if (holding === undefined) {
      holding = { owner: undefined, onDisk: null };
      this.holdings.set(sequence, holding);
    }
    return holding;
  }
}
