import type { Logger } from "pino";
import type { MetricsRecorder } from "../../shared/metrics-recorder.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { EngineChunk, GenerateRequest } from "../chat-types.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import type { CompletionChunk, CompletionRequest } from "../completion-types.js";
import { countedStream } from "./counted-stream.js";
import { loadProgressEvents } from "./load-progress-events.js";
import type { EmbedRequest, EmbedResult } from "../embedding-types.js";
import type { Engine, EngineCapabilities, EngineHealth, WarmUpOptions } from "../engine.js";
import type { EngineKind } from "../../config/engine-kinds.js";
import { ModelAdmission } from "./model-admission.js";
import type { ModelScheduler, Reservation, ScheduledModel } from "./model-scheduler.js";
import type { RerankRequest, RerankResult } from "../rerank-types.js";
import type { DetokenizeRequest, TokenizeRequest, TokenizeResult } from "../tokenize-types.js";
import { driverOf } from "../drivers/engine-drivers.js";

export interface ManagedEngineOptions {
  /** Unload after this long without use (llama.models.<name>.idle_unload_s); null = never. */
  idleUnloadMs: number | null;
  logger: Logger;
  /** Admits each load under the memory budget (absent: loads are not accounted). */
  scheduler?: ModelScheduler;
  /** llama.models.<name>.pin: never unloaded to make room, nor after idle_unload_s. */
  pinned?: boolean;
  /** Load durations (local_ai_model_load_seconds). */
  metrics?: MetricsRecorder;
}

/** What a call brings to the load it may have to wait for: its cancel, its listeners, its logger. */
type LoadCall = Pick<WarmUpOptions, "signal" | "onModelLoad" | "onProgress" | "logger">;

/** A model counts as loaded while its engine serves (or is degraded but serving). */
export function isLoaded(health: EngineHealth): boolean {
  return health.state === "ready" || health.state === "degraded";
}

/**
 * One configured model's engine with a lifecycle: `unload()` frees the loaded model (embedded:
 * context and model disposed; llama-server: child stopped) and the next use loads it again;
 * `idle_unload_s` does the same after a quiet time. It counts the calls in flight (generations,
 * completions, embeddings, token counts, warm-ups) so that nothing is unloaded under a running
 * request: unload() refuses with `busy` then, and the idle timer only runs while none is.
 * Unloading replaces the inner engine with a fresh, unloaded one of the same model (engines are
 * cheap to create and load lazily), so callers keep their reference.
 */
export class ManagedEngine implements Engine, ScheduledModel {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  readonly modelName: string;
  readonly embed?: (request: EmbedRequest) => Promise<EmbedResult>;
  readonly rerank?: (request: RerankRequest) => Promise<RerankResult>;
  readonly tokenize?: (request: TokenizeRequest) => Promise<TokenizeResult>;
  readonly detokenize?: (request: DetokenizeRequest) => Promise<string>;
  readonly complete?: (request: CompletionRequest) => AsyncIterable<CompletionChunk>;
  readonly countTokens?: (text: string, signal?: AbortSignal) => Promise<number>;
  readonly toolTokens?: (tools: readonly ToolSpec[], signal?: AbortSignal) => Promise<number>;
  readonly promptTokens?: (request: Pick<GenerateRequest, "messages" | "tools">, signal?: AbortSignal) => Promise<number | null>;
  readonly contextLength?: () => number | null;
  readonly forgetConversation?: (cacheKey: string) => Promise<void>;
  private current: Engine;
  private active = 0;
  private lastUsed = Date.now();
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** The scheduler's side of this model's loads; null without a scheduler. */
  private readonly admission: ModelAdmission | null;
  /** A request's keep_alive for the idle time after it (ms; null = never); undefined = idle_unload_s. */
  private keepAliveMs: number | null | undefined = undefined;
  /** When the load under way was admitted (ms); null when none is being timed. */
  private loadingSince: number | null = null;

  /** `first`: the engine to start with; `create`: a fresh, unloaded one of the same model (after an unload). */
  constructor(
    first: Engine,
    private readonly create: () => Promise<Engine>,
    private readonly options: ManagedEngineOptions,
  ) {
    this.current = first;
    // A kind with no local weights (openai) has nothing to load here: its calls are never told `loading`.
    const remote = driverOf(first.kind).local === null;
    this.admission = options.scheduler === undefined ? null : new ModelAdmission(options.scheduler, this, () => remote || isLoaded(this.current.health()));
    this.kind = first.kind;
    this.capabilities = first.capabilities;
    this.modelName = first.modelName;
    // The optional methods exist exactly when the engine has them (front doors test for them).
    if (first.embed) this.embed = (request) => this.using({}, () => (this.current.embed as NonNullable<Engine["embed"]>).call(this.current, request));
    if (first.rerank) this.rerank = (request) => this.using({ signal: request.signal }, () => (this.current.rerank as NonNullable<Engine["rerank"]>).call(this.current, request));
    if (first.tokenize) this.tokenize = (request) => this.using({ signal: request.signal }, () => (this.current.tokenize as NonNullable<Engine["tokenize"]>).call(this.current, request));
    if (first.detokenize) this.detokenize = (request) => this.using({ signal: request.signal }, () => (this.current.detokenize as NonNullable<Engine["detokenize"]>).call(this.current, request));
    if (first.complete) this.complete = (request) => this.usingStream({ signal: request.signal }, () => (this.current.complete as NonNullable<Engine["complete"]>).call(this.current, request));
    if (first.countTokens) this.countTokens = (text, signal) => this.using({ signal: signal }, () => (this.current.countTokens as NonNullable<Engine["countTokens"]>).call(this.current, text, signal));
    if (first.toolTokens) this.toolTokens = (tools, signal) => this.using({ signal: signal }, () => (this.current.toolTokens as NonNullable<Engine["toolTokens"]>).call(this.current, tools, signal));
    if (first.promptTokens) this.promptTokens = (request, signal) => this.using({ signal: signal }, () => (this.current.promptTokens as NonNullable<Engine["promptTokens"]>).call(this.current, request, signal));
    if (first.contextLength) this.contextLength = () => this.current.contextLength?.() ?? null;
    // Not through `using`: forgetting must neither load a model nor wait for the queue.
    if (first.forgetConversation) this.forgetConversation = async (cacheKey) => this.current.forgetConversation?.(cacheKey);
  }

  warmUp(options?: WarmUpOptions): Promise<void> {
    return this.using(options ?? {}, () => this.current.warmUp(options));
  }

  generate(request: GenerateRequest): AsyncIterable<EngineChunk> {
    return this.usingStream(request, () => this.current.generate(request));
  }

  get pinned(): boolean {
    return this.options.pinned === true;
  }

  get lastUsedAt(): number {
    return this.lastUsed;
  }

  /** Waiting in the scheduler's queue for memory. */
  get queued(): boolean {
    return this.admission?.queued ?? false;
  }

  keepAlive(seconds: number | null): void {
    this.keepAliveMs = seconds === null ? undefined : seconds < 0 ? null : seconds * 1000;
    if (this.active === 0) {
      this.clearIdleTimer();
      if (isLoaded(this.current.health())) this.armIdleTimer();
    }
  }

  private get idleMs(): number | null {
    return this.keepAliveMs === undefined ? this.options.idleUnloadMs : this.keepAliveMs;
  }

  /** When idle_unload_s will unload it (epoch ms): loaded, idle, unpinned, with a timeout; else null. */
  expiresAt(): number | null {
    const ms = this.idleMs;
    if (ms === null || this.pinned || this.active > 0 || !isLoaded(this.current.health())) return null;
    return this.lastUsed + ms;
  }

  /** What the scheduler counts for this model (null: nothing reserved). */
  accounted(): Reservation | null {
    return this.admission?.reservation ?? null;
  }

  /** The scheduler's way to make room: an unload that names why. */
  evict(reason: string): Promise<boolean> {
    return this.unload(reason);
  }

  health(): EngineHealth {
    const health = this.current.health();
    if (this.options.idleUnloadMs === null) return health;
    const idle = isLoaded(health) && this.active === 0 ? { idle_s: Math.floor((Date.now() - this.lastUsed) / 1000) } : {};
    return { ...health, info: { ...health.info, idle_unload_s: this.options.idleUnloadMs / 1000, ...idle } };
  }

  /** Requests running on this model now. */
  get inFlight(): number {
    return this.active;
  }

  /**
   * Frees the loaded model; resolves true when one was loaded, false when there was nothing to
   * free. Refuses with `busy` while requests run on it (cancel them first).
   */
  async unload(reason = "unload requested"): Promise<boolean> {
    if (this.active > 0) {
      throw new RuntimeError("busy", `Model "${this.modelName}" is in use by ${this.active} request${this.active === 1 ? "" : "s"}; cancel ${this.active === 1 ? "it" : "them"} (or wait) and unload again`, {
        details: { model: this.modelName, in_flight: this.active },
      });
    }
    const old = this.current;
    const health = old.health();
    if (!isLoaded(health) && health.state !== "starting") {
      // Nothing is held (a load that failed, a child that is down): nothing to account either.
      this.admission?.release();
      return false;
    }
    this.clearIdleTimer();
    const fresh = await this.create();
    if (this.active > 0 || this.current !== old) {
      // A request (or another unload) got in while the fresh engine was made: leave things as they are.
      await fresh.close();
      return this.current !== old;
    }
    // Swapped first: a request arriving while the old engine closes loads the model afresh.
    this.current = fresh;
    const reservation = this.admission?.detach() ?? null;
    try {
      await old.close();
    } finally {
      if (reservation !== null) this.options.scheduler?.release(reservation);
    }
    this.options.logger.info({ model: this.modelName, reason, memory_bytes: health.memoryBytes }, "model unloaded");
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearIdleTimer();
    try {
      await this.current.close();
    } finally {
      this.admission?.release();
    }
  }

  private async using<T>(call: LoadCall, work: () => Promise<T>): Promise<T> {
    this.begin();
    try {
      const needsLoad = await this.admitted(call);
      this.timeLoad();
      if (needsLoad) await this.load(call);
      const result = await work();
      this.loaded();
      return result;
    } catch (error) {
      this.failed();
      throw error;
    } finally {
      this.end();
    }
  }

  private usingStream<T>(call: LoadCall, open: () => AsyncIterable<T>): AsyncIterable<T> {
    return countedStream(open, {
      begin: () => this.begin(),
      // Admission, then the load itself (its model_load events), before the engine stream opens.
      admitted: async () => {
        const needsLoad = await this.admitted(call);
        this.timeLoad();
        if (needsLoad) await this.load(call);
        return needsLoad;
      },
      firstChunk: () => {
        this.loaded();
      },
      failed: () => this.failed(),
      end: () => this.end(),
    });
  }

  /**
   * The load a call waits for, made (or joined) before the call itself, so that the caller hears
   * its progress (`loading` with `progress` at each further 10 %, where the engine reports it:
   * node-llama-cpp's onLoadProgress) and `loaded` the moment it is done. warmUp is shared and
   * idempotent in every engine, so the call that follows finds the model loaded.
   */
  private async load(call: LoadCall): Promise<void> {
    const { signal, logger, onModelLoad } = call;
    await this.current.warmUp({ ...(signal ? { signal } : {}), ...(logger ? { logger } : {}), onProgress: loadProgressEvents(this.modelName, onModelLoad, call.onProgress) });
    this.loaded();
    onModelLoad?.({ model: this.modelName, state: "loaded" });
  }

  /** Before a call reaches the engine (see ModelAdmission.admitted); true when the model is not loaded yet. */
  private admitted(call: LoadCall): Promise<boolean> {
    return this.admission?.admitted(call.signal, call.onModelLoad) ?? Promise.resolve(false);
  }

  /** After a call that worked: the first one after a load corrects the estimate with what the engine measured. */
  private loaded(): void {
    const health = this.current.health();
    if (!isLoaded(health)) return;
    this.admission?.loaded(health.memoryBytes);
    if (this.loadingSince !== null) {
      this.options.metrics?.modelLoad(this.modelName, (Date.now() - this.loadingSince) / 1000);
      this.loadingSince = null;
    }
  }

  /** A call that reaches an unloaded model loads it: timed from here (after any wait for memory) to its first answer. */
  private timeLoad(): void {
    if (this.loadingSince === null && !isLoaded(this.current.health())) this.loadingSince = Date.now();
  }

  /** After a call that failed: a load that failed holds nothing, so its memory is free for others. */
  private failed(): void {
    const health = this.current.health();
    if (!isLoaded(health)) this.loadingSince = null;
    if (this.active === 1 && !isLoaded(health) && health.state !== "starting") this.admission?.release();
  }

  private begin(): void {
    this.active += 1;
    this.lastUsed = Date.now();
    this.clearIdleTimer();
  }

  private end(): void {
    this.active -= 1;
    this.lastUsed = Date.now();
    if (this.active === 0) {
      this.armIdleTimer();
      this.options.scheduler?.idle();
    }
  }

  private armIdleTimer(): void {
    const ms = this.idleMs;
    if (ms === null || this.closed || this.pinned) return;
    this.clearIdleTimer();
    // Unref'd: an idle model never keeps a finished process alive.
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.active > 0 || this.closed) return;
      this.unload(`idle for ${ms / 1000} s (${this.keepAliveMs === undefined ? "idle_unload_s" : "keep_alive"})`).catch((error: unknown) => {
        this.options.logger.warn({ err: error, model: this.modelName }, "idle unload failed");
      });
    }, ms);
    this.idleTimer.unref();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}
