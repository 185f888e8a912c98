import type { Logger } from "pino";
import { RuntimeError } from "../shared/runtime-error.js";
import type { EngineChunk, GenerateRequest, ToolSpec } from "./chat-types.js";
import type { CompletionChunk, CompletionRequest } from "./completion-types.js";
import type { EmbedRequest, EmbedResult } from "./embedding-types.js";
import type { Engine, EngineCapabilities, EngineHealth, EngineKind, WarmUpOptions } from "./engine.js";

export interface ManagedEngineOptions {
  /** Unload after this long without use (llama.models.<name>.idle_unload_s); null = never. */
  idleUnloadMs: number | null;
  logger: Logger;
}

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
export class ManagedEngine implements Engine {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  readonly modelName: string;
  readonly embed?: (request: EmbedRequest) => Promise<EmbedResult>;
  readonly complete?: (request: CompletionRequest) => AsyncIterable<CompletionChunk>;
  readonly countTokens?: (text: string, signal?: AbortSignal) => Promise<number>;
  readonly toolTokens?: (tools: readonly ToolSpec[], signal?: AbortSignal) => Promise<number>;
  readonly promptTokens?: (request: Pick<GenerateRequest, "messages" | "tools">, signal?: AbortSignal) => Promise<number | null>;
  readonly contextLength?: () => number | null;
  private current: Engine;
  private active = 0;
  private lastUsed = Date.now();
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;

  /** `first`: the engine to start with; `create`: a fresh, unloaded one of the same model (after an unload). */
  constructor(
    first: Engine,
    private readonly create: () => Promise<Engine>,
    private readonly options: ManagedEngineOptions,
  ) {
    this.current = first;
    this.kind = first.kind;
    this.capabilities = first.capabilities;
    this.modelName = first.modelName;
    // The optional methods exist exactly when the engine has them (front doors test for them).
    if (first.embed) this.embed = (request) => this.using(() => (this.current.embed as NonNullable<Engine["embed"]>).call(this.current, request));
    if (first.complete) this.complete = (request) => this.usingStream(() => (this.current.complete as NonNullable<Engine["complete"]>).call(this.current, request));
    if (first.countTokens) this.countTokens = (text, signal) => this.using(() => (this.current.countTokens as NonNullable<Engine["countTokens"]>).call(this.current, text, signal));
    if (first.toolTokens) this.toolTokens = (tools, signal) => this.using(() => (this.current.toolTokens as NonNullable<Engine["toolTokens"]>).call(this.current, tools, signal));
    if (first.promptTokens) this.promptTokens = (request, signal) => this.using(() => (this.current.promptTokens as NonNullable<Engine["promptTokens"]>).call(this.current, request, signal));
    if (first.contextLength) this.contextLength = () => this.current.contextLength?.() ?? null;
  }

  warmUp(options?: WarmUpOptions): Promise<void> {
    return this.using(() => this.current.warmUp(options));
  }

  generate(request: GenerateRequest): AsyncIterable<EngineChunk> {
    return this.usingStream(() => this.current.generate(request));
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
    if (!isLoaded(health) && health.state !== "starting") return false;
    this.clearIdleTimer();
    const fresh = await this.create();
    if (this.active > 0 || this.current !== old) {
      // A request (or another unload) got in while the fresh engine was made: leave things as they are.
      await fresh.close();
      return this.current !== old;
    }
    // Swapped first: a request arriving while the old engine closes loads the model afresh.
    this.current = fresh;
    await old.close();
    this.options.logger.info({ model: this.modelName, reason, memory_bytes: health.memoryBytes }, "model unloaded");
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearIdleTimer();
    await this.current.close();
  }

  private async using<T>(work: () => Promise<T>): Promise<T> {
    this.begin();
    try {
      return await work();
    } finally {
      this.end();
    }
  }

  private usingStream<T>(open: () => AsyncIterable<T>): AsyncIterable<T> {
    const begin = (): void => this.begin();
    const end = (): void => this.end();
    return {
      async *[Symbol.asyncIterator]() {
        begin();
        try {
          yield* open();
        } finally {
          end();
        }
      },
    };
  }

  private begin(): void {
    this.active += 1;
    this.lastUsed = Date.now();
    this.clearIdleTimer();
  }

  private end(): void {
    this.active -= 1;
    this.lastUsed = Date.now();
    if (this.active === 0) this.armIdleTimer();
  }

  private armIdleTimer(): void {
    const ms = this.options.idleUnloadMs;
    if (ms === null || this.closed) return;
    this.clearIdleTimer();
    // Unref'd: an idle model never keeps a finished process alive.
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.active > 0 || this.closed) return;
      this.unload(`idle for ${ms / 1000} s (idle_unload_s)`).catch((error: unknown) => {
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
