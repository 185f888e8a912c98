import type { Logger } from "pino";
import type { EngineChunk, GenerateRequest } from "./chat-types.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { CompletionChunk, CompletionRequest } from "./completion-types.js";
import type { EmbedRequest, EmbedResult } from "./embedding-types.js";
import type { RerankRequest, RerankResult } from "./rerank-types.js";
import type { ModelLoadEvent } from "./scheduler/scheduler-types.js";
import type { DetokenizeRequest, TokenizeRequest, TokenizeResult } from "./tokenize-types.js";
import type { EngineKind } from "../config/engine-kinds.js";

/** stopped -> starting -> ready; degraded = serving on a lower tier; down = not serving (circuit open, crashed). */
export type EngineState = "stopped" | "starting" | "ready" | "degraded" | "down";

export type CircuitState = "closed" | "open" | "half_open";

export interface EngineHealth {
  state: EngineState;
  /** `NORMAL` when all is well; lower tiers (e.g. `REDUCED_CONTEXT`, `CPU_ONLY`) say what was given up. */
  degradationTier: string;
  /** Plain-words reason when not ready. */
  detail?: string;
  circuit?: CircuitState;
  /** Engine-specific facts (pid, port, restarts, backend, model path...). */
  info?: Record<string, unknown>;
  /**
   * Memory the loaded model holds, where the engine can tell: embedded = weights + context
   * (RAM and VRAM together, as node-llama-cpp sizes them); llama-server = the child's resident
   * RAM (its GPU memory is not included). Absent when nothing is loaded.
   */
  memoryBytes?: number;
}

export interface LoadProgress {
  /** "downloading": a model reference with `download: auto` is being fetched before the load. */
  phase: "loading" | "starting" | "checking" | "downloading";
  /** 0..1 where known. */
  progress?: number;
  /** "downloading" only: bytes so far and in all. */
  downloadedBytes?: number;
  totalBytes?: number;
}

export interface WarmUpOptions {
  signal?: AbortSignal;
  onProgress?: (progress: LoadProgress) => void;
  /** Told why the call waits for its model (queued for memory, loading): the scheduler's `model_load`. */
  onModelLoad?: (event: ModelLoadEvent) => void;
  /**
   * The caller's logger (its request id on it): the lines of a load this call starts go there, so
   * they carry that id. Passed, not found through the async flow: an AsyncLocalStorage would cost
   * every promise of generation on Node 20 (docs/benchmarks.md, "The per-token path").
   */
  logger?: Logger;
}

/**
 * One interface for every model backend. Implementations:
 * - warmUp is idempotent and shared: concurrent callers await the same load; a failed load can be retried.
 * - generate streams typed chunks; aborting `request.signal` stops generation at once and the
 *   iterator throws RuntimeError("cancelled"); no work keeps running after.
 * - errors are RuntimeError with a typed code (model_missing, engine_unavailable, ...).
 */
/** What an engine can take and enforce; front doors refuse or warn about the rest. */
export interface EngineCapabilities {
  /** Image parts in user messages. */
  images: boolean;
  /** tool_choice "required" / a named function is enforced, not only offered. */
  requiredToolChoice: boolean;
}

export interface Engine {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  /** The config name of the model (`llama.models.<name>`). */
  readonly modelName: string;
  warmUp(options?: WarmUpOptions): Promise<void>;
  /** Tokens `text` takes for this model, where the engine can reach the tokenizer (embedded; llama-server's /tokenize). Loads or starts the model if needed. */
  countTokens?(text: string, signal?: AbortSignal): Promise<number>;
  /** Tokens the model's chat template spends on offering these tools, where the engine can render it (embedded; llama-server's /apply-template). */
  toolTokens?(tools: readonly ToolSpec[], signal?: AbortSignal): Promise<number>;
  /** The whole prompt a generate request would evaluate, rendered by the model's chat template and tokenized (embedded; llama-server's /apply-template + /tokenize); null where it cannot be rendered ahead of time. */
  promptTokens?(request: Pick<GenerateRequest, "messages" | "tools">, signal?: AbortSignal): Promise<number | null>;
  generate(request: GenerateRequest): AsyncIterable<EngineChunk>;
  health(): EngineHealth;
  close(): Promise<void>;
  /** Vectors for texts (POST /v1/embeddings). Absent: this engine cannot embed. */
  embed?(request: EmbedRequest): Promise<EmbedResult>;
  /** Relevance scores of documents for a query (POST /v1/rerank). Absent: this engine cannot rerank. */
  rerank?(request: RerankRequest): Promise<RerankResult>;
  /** The model's tokenizer (POST /tokenize, stdio `tokenize`). Absent: this engine cannot reach it. */
  tokenize?(request: TokenizeRequest): Promise<TokenizeResult>;
  /** Token ids back to text (POST /detokenize, stdio `detokenize`). */
  detokenize?(request: DetokenizeRequest): Promise<string>;
  /** Plain text completion (POST /v1/completions): no chat template, no tools, no agent loop. */
  complete?(request: CompletionRequest): AsyncIterable<CompletionChunk>;
  /**
   * After a request with `keep_alive`: how long the model stays loaded once idle (seconds; 0 =
   * unload as soon as idle; -1 = never on idle); null = back to its idle_unload_s. Managed engines only.
   */
  keepAlive?(seconds: number | null): void;
  /** The context one conversation has, once known (a loaded model; a llama-server slot's share); null before. */
  contextLength?(): number | null;
  /** A deleted conversation (`cacheKey`): what the engine keeps of it (a KV state to save, its saved files) is dropped. */
  forgetConversation?(cacheKey: string): Promise<void>;
}
