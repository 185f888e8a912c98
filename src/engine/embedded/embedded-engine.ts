import type { ChatWrapper, Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { Logger } from "pino";
import type { ModelConfig } from "../../config/schema.js";
import { AsyncQueue } from "../../shared/async-queue.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { EngineChunk, GenerateRequest } from "../chat-types.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { embeddedAutoThreads } from "../auto-threads.js";
import type { CompletionChunk, CompletionRequest } from "../completion-types.js";
import type { EmbedRequest, EmbedResult } from "../embedding-types.js";
import type { Engine, EngineHealth, WarmUpOptions } from "../engine.js";
import type { ModelFileResolver } from "../model-file.js";
import { SharedLoad, type LoadContext } from "./shared-load.js";
import { createKvKeeper, type KvCacheSettings, type KvKeeper } from "./kv-keeper.js";
import { completeEmbedded } from "./embedded-completion.js";
import { EmbeddedEmbedder } from "./embedded-embedder.js";
import { EmbeddedRanker } from "./embedded-ranker.js";
import { detokenizeWith, tokenizeWith } from "../llama/model-tokenizer.js";
import type { RerankRequest, RerankResult } from "../rerank-types.js";
import type { DetokenizeRequest, TokenizeRequest, TokenizeResult } from "../tokenize-types.js";
import type { LlamaRuntime } from "./llama-runtime.js";
import { promptTokenCount, promptTokensFor } from "../llama/prompt-tokens.js";
import { countTokensSliced } from "../llama/sliced-tokenize.js";
import { SequencePool } from "./sequence-pool.js";
import { offeredTools } from "./generation-options.js";
import { generateOnSequence } from "./sequence-generation.js";

export interface EmbeddedEngineDeps {
  llama: LlamaRuntime;
  logger: Logger;
  /** Context sequences: how many chats generate at once on this model. */
  parallel: number;
  /** Checks the GGUF metadata before llama.cpp sees it (a malformed file can abort the process). */
  validateModel?: (path: string) => Promise<void>;
  /** Where conversations' KV states are saved across eviction and restarts, and the disk budget (0: off). */
  kvCache?: KvCacheSettings;
  /** The local file of the model (its `path`, or the download of a reference); `path` by default. */
  modelFile?: ModelFileResolver;
}

interface Loaded {
  model: LlamaModel;
  context: LlamaContext;
  pool: SequencePool;
  chatWrapper: ChatWrapper;
  /** Saves and restores conversations' KV states (absent: kv_cache_disk_bytes 0 or a model that cannot). */
  keeper: KvKeeper | null;
}

/** node-llama-cpp in process: the default engine. */
export class EmbeddedEngine implements Engine {
  readonly kind = "embedded";
  /** Node-llama-cpp 3 has no image input here, and it can offer functions but not force a call. */
  readonly capabilities = { images: false, requiredToolChoice: false };
  /** The model load: shared by concurrent first callers, with a lifetime of its own (shared-load.ts). */
  private readonly model = new SharedLoad<Loaded>((context) => this.loadRecordingError(context));
  private lastError: string | null = null;
  private readonly active = new Set<AbortController>();
  /** Created with the first embeddings request on the loaded model (its context is lazy too). */
  private embedder: EmbeddedEmbedder | null = null;
  /** Created with the first rerank request, like the embedder. */
  private ranker: EmbeddedRanker | null = null;

  constructor(
    readonly modelName: string,
    private readonly config: ModelConfig,
    private readonly deps: EmbeddedEngineDeps,
  ) {}

  async warmUp(options: WarmUpOptions = {}): Promise<void> {
    await this.ensureLoaded(options);
  }

  async toolTokens(tools: readonly ToolSpec[], signal?: AbortSignal): Promise<number> {
    if (tools.length === 0) return 0;
    const loaded = await this.ensureLoaded(signal ? { signal } : {});
    const probe: GenerateRequest = { messages: [{ role: "system", content: "" }, { role: "user", content: "" }], temperature: 0, maxTokens: 1 };
    const bare = promptTokensFor(loaded.model, loaded.chatWrapper, probe, undefined)?.length ?? 0;
    const offered = promptTokensFor(loaded.model, loaded.chatWrapper, probe, [...tools])?.length ?? bare;
    return Math.max(0, offered - bare);
  }

  async promptTokens(request: Pick<GenerateRequest, "messages" | "tools">, signal?: AbortSignal): Promise<number | null> {
    const loaded = await this.ensureLoaded(signal ? { signal } : {});
    const full: GenerateRequest = { ...request, temperature: 0, maxTokens: 1 };
    return (await promptTokenCount(loaded.model, loaded.chatWrapper, full, offeredTools(full), signal)) ?? null;
  }

  async countTokens(text: string, signal?: AbortSignal): Promise<number> {
    const loaded = await this.ensureLoaded(signal ? { signal } : {});
    return countTokensSliced(loaded.model, text, { specialTokens: false, signal });
  }

  health(): EngineHealth {
    const loaded = this.model.current;
    if (loaded) {
      return { state: "ready", degradationTier: "NORMAL", info: { sequences_free: loaded.pool.available, model: this.config.path }, memoryBytes: loaded.model.size + loaded.context.stateSize };
    }
    if (this.model.inProgress) return { state: "starting", degradationTier: "NORMAL" };
    if (this.lastError !== null) return { state: "down", degradationTier: "NORMAL", detail: this.lastError };
    return { state: "stopped", degradationTier: "NORMAL" };
  }

  generate(request: GenerateRequest): AsyncIterable<EngineChunk> {
    return { [Symbol.asyncIterator]: () => this.stream(request)[Symbol.asyncIterator]() };
  }

  async embed(request: EmbedRequest): Promise<EmbedResult> {
    const loaded = await this.ensureLoaded(request.signal ? { signal: request.signal } : {});
    const threads = this.threadsFor(loaded.model.llama);
    this.embedder ??= new EmbeddedEmbedder(loaded.model, this.modelName, { contextSize: loaded.context.contextSize, threads });
    return this.embedder.embed(request);
  }

  async rerank(request: RerankRequest): Promise<RerankResult> {
    const loaded = await this.ensureLoaded(request.signal ? { signal: request.signal } : {});
    this.ranker ??= new EmbeddedRanker(loaded.model, this.modelName, { contextSize: loaded.context.contextSize, threads: this.threadsFor(loaded.model.llama) });
    return this.ranker.rerank(request);
  }

  async tokenize(request: TokenizeRequest): Promise<TokenizeResult> {
    const loaded = await this.ensureLoaded(request.signal ? { signal: request.signal } : {});
    return await tokenizeWith(loaded.model, request);
  }

  async detokenize(request: DetokenizeRequest): Promise<string> {
    const loaded = await this.ensureLoaded(request.signal ? { signal: request.signal } : {});
    return detokenizeWith(loaded.model, this.modelName, request.tokens);
  }

  complete(request: CompletionRequest): AsyncIterable<CompletionChunk> {
    return completeEmbedded(request, {
      modelName: this.modelName,
      acquire: async (signal) => {
        const loaded = await this.ensureLoaded({ signal });
        const sequence = await this.lend(loaded, signal, null);
        return { sequence, release: () => loaded.pool.release(sequence) };
      },
      track: (controller) => {
        this.active.add(controller);
        return () => this.active.delete(controller);
      },
    });
  }

  contextLength(): number | null {
    return this.model.current?.context.contextSize ?? null;
  }

  async forgetConversation(cacheKey: string): Promise<void> {
    await this.model.current?.keeper?.forget(cacheKey);
  }

  async close(): Promise<void> {
    for (const controller of this.active) controller.abort("engine closing");
    await this.embedder?.dispose();
    this.embedder = null;
    await this.ranker?.dispose();
    this.ranker = null;
    // Aborts a load in progress (its own signal) and hands back a finished one to dispose.
    const loaded = await this.model.close();
    if (loaded) {
      // Each conversation still held in a sequence is saved for the next process (waits for the
      // aborted generations' last evaluation: saving takes the sequence's lock).
      await loaded.keeper?.saveAll(loaded.pool.sequences);
      await loaded.context.dispose();
      await loaded.model.dispose();
    }
  }

  /** Waits for the shared load on behalf of one caller; the caller's abort rejects only its own wait. */
  private ensureLoaded(options: WarmUpOptions = {}): Promise<Loaded> {
    return this.model.get(options);
  }

  private async loadRecordingError(context: LoadContext): Promise<Loaded> {
    try {
      const loaded = await this.load(context);
      this.lastError = null;
      return loaded;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      throw error;
    }
  }

  private async load(options: LoadContext): Promise<Loaded> {
    if (this.config.path === null) throw new RuntimeError("config_invalid", `llama.models.${this.modelName}.path is required for the embedded engine`);
    const path = this.deps.modelFile ? await this.deps.modelFile({ signal: options.signal, onProgress: options.onProgress }) : this.config.path;
    await this.deps.validateModel?.(path);
    const { module, llama } = await this.deps.llama.get();
    if (options.signal.aborted) throw new RuntimeError("shutting_down", "Model load stopped: the engine is closing");
    const started = Date.now();
    let model: LlamaModel;
    try {
      model = await llama.loadModel({
        modelPath: path,
        gpuLayers: this.config.gpu_layers,
        loadSignal: options.signal,
        onLoadProgress: (progress) => options.onProgress({ phase: "loading", progress }),
      });
    } catch (error) {
      // Only close() aborts the shared load (a caller's cancel leaves it running for the others).
      if (options.signal.aborted) throw new RuntimeError("shutting_down", "Model load stopped: the engine is closing", { cause: error });
      throw new RuntimeError("model_missing", `Cannot load model ${path}: ${(error as Error).message}`, { cause: error });
    }
    const threads = this.threadsFor(llama);
    const context = await model.createContext({
      contextSize: Math.min(this.config.ctx_size, model.trainContextSize),
      sequences: this.deps.parallel,
      threads,
    });
    const chatWrapper = module.resolveChatWrapper(model);
    const pool = new SequencePool(context, this.deps.parallel);
    const keeper = await createKvKeeper(this.deps.kvCache, path, llama, pool.sequences, this.deps.logger);
    (options.logger ?? this.deps.logger).info(
      { path, ms: Date.now() - started, threads, ctx: context.contextSize, sequences: this.deps.parallel, gpu_layers: model.gpuLayers, chat_wrapper: chatWrapper.wrapperName },
      "embedded model loaded",
    );
    return { model, context, pool, chatWrapper, keeper };
  }

  /**
   * A sequence of the pool for one generation: the one holding most of `request`'s prompt, with
   * the conversation's saved KV state restored into it when it does not hold it (kv-keeper.ts).
   * `request` null: a completion, which belongs to no conversation.
   */
  private async lend(loaded: Loaded, signal: AbortSignal, request: GenerateRequest | null): Promise<LlamaContextSequence> {
    // Rendered at most once, and only when the pool or the keeper has a choice to make.
    let rendered: { tokens: readonly Token[] | undefined } | null = null;
    const prompt = (): readonly Token[] | undefined =>
      (rendered ??= { tokens: request === null ? undefined : promptTokensFor(loaded.model, loaded.chatWrapper, request, offeredTools(request)) }).tokens;
    const sequence = await loaded.pool.acquire(signal, request === null ? undefined : prompt);
    try {
      await loaded.keeper?.prepare(sequence, request?.cacheKey, prompt);
    } catch (error) {
      loaded.pool.release(sequence);
      throw error;
    }
    return sequence;
  }

  private threadsFor(llama: Llama): number {
    return this.config.threads === "auto" ? embeddedAutoThreads(llama.cpuMathCores) : this.config.threads;
  }

  private stream(request: GenerateRequest): AsyncQueue<EngineChunk> {
    const queue = new AsyncQueue<EngineChunk>();
    void this.run(request, queue);
    return queue;
  }

  private async run(request: GenerateRequest, queue: AsyncQueue<EngineChunk>): Promise<void> {
    // Our own controller: the caller's abort and close() both stop generation at once.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    if (request.signal?.aborted) controller.abort(request.signal.reason);
    this.active.add(controller);
    let sequence: LlamaContextSequence | null = null;
    let loaded: Loaded | null = null;
    const emit = (chunk: EngineChunk): void => {
      if (!controller.signal.aborted) queue.push(chunk);
    };
    try {
      const ready = await this.ensureLoaded({ signal: controller.signal });
      loaded = ready;
      sequence = await this.lend(ready, controller.signal, request);
      const result = await generateOnSequence({ sequence, chatWrapper: ready.chatWrapper, request, signal: controller.signal, emit, llama: async () => (await this.deps.llama.get()).llama });
      if (controller.signal.aborted) throw new RuntimeError("cancelled", "Generation cancelled");
      for (const chunk of result) emit(chunk);
      queue.close();
    } catch (error) {
      queue.fail(controller.signal.aborted ? new RuntimeError("cancelled", "Generation cancelled", { cause: error }) : toEngineError(error));
    } finally {
      request.signal?.removeEventListener("abort", onAbort);
      this.active.delete(controller);
      if (sequence && loaded) loaded.pool.release(sequence);
    }
  }
}

function toEngineError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError("engine_error", `Embedded generation failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}
