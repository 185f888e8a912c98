// The `openai` engine: a model served by any OpenAI-compatible endpoint (vLLM, Ollama, LM Studio,
// a llama-server elsewhere). Nothing runs locally, so "warm-up" is a reachability/auth check and
// health reflects what the last check or request learned about the server.
import type OpenAI from "openai";
import type { ModelConfig } from "../../config/schema.js";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { EngineChunk, GenerateRequest } from "../chat-types.js";
import type { CompletionChunk, CompletionRequest } from "../completion-types.js";
import type { EmbedRequest, EmbedResult } from "../embedding-types.js";
import type { Engine, EngineHealth, EngineState, WarmUpOptions } from "../engine.js";
import { createOpenAiClient } from "./openai-client.js";
import { streamOpenAiChat } from "./openai-chat-stream.js";
import { raceAbort } from "../../shared/abort.js";
import { cancelledError } from "./openai-errors.js";
import { probeModels } from "./probe-models.js";
import { streamOpenAiCompletion } from "./openai-completion-stream.js";
import { embedViaOpenAi } from "./openai-embeddings.js";
import { FailoverFetch } from "./failover-fetch.js";
import { baseUrlsOf } from "../../config/model-endpoints.js";
import { affinityKey } from "./affinity-key.js";
import { rerankViaOpenAi } from "./openai-rerank.js";
import type { RerankRequest, RerankResult } from "../rerank-types.js";

export interface OpenAiEngineDeps {
  logger: Logger;
  fetch?: typeof fetch;
  /** Bound on connect + response headers for chat requests (default DEFAULT_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** Bound on the warm-up GET /models (default 5 s). */
  probeTimeoutMs?: number;
}

/** One warm-up in flight, shared by every concurrent caller. */
interface Probe {
  promise: Promise<void>;
  controller: AbortController;
  waiters: number;
  settled: boolean;
}

/** Errors that say the server itself is unusable (as opposed to one bad request). */
function isServerLevel(err: unknown): err is RuntimeError {
  return err instanceof RuntimeError && (err.code === "engine_unavailable" || err.code === "engine_auth");
}

export class OpenAiEngine implements Engine {
  readonly kind = "openai" as const;
  /** The upstream decides: parts and tool_choice pass through. */
  readonly capabilities = { images: true, requiredToolChoice: true };
  readonly modelName: string;
  private readonly client: OpenAI;
  /** The id sent to the server: `model:` from the config, else the config name. */
  private readonly model: string;
  private readonly baseUrl: string;
  /** Several endpoints: tried in order on connection failure (failover-fetch.ts); null for one. */
  private readonly failover: FailoverFetch | null;
  private readonly affinityHeader: string | null;
  private readonly logger: Logger;
  private readonly probeTimeoutMs: number | undefined;
  private state: EngineState = "stopped";
  private detail: string | undefined = "not warmed up";
  private probe: Probe | undefined;
  private closed = false;
  /** One controller per running generate, so close() can stop them all. */
  private readonly active = new Set<AbortController>();

  constructor(modelName: string, config: ModelConfig, deps: OpenAiEngineDeps) {
    if (config.base_url === null) {
      // The config schema already requires it for engine "openai"; this guards direct construction.
      throw new RuntimeError("config_invalid", `llama.models.${modelName}.base_url is required for engine "openai"`);
    }
    const baseUrls = baseUrlsOf(config);
    this.modelName = modelName;
    this.model = config.model ?? modelName;
    this.baseUrl = baseUrls[0]!;
    this.affinityHeader = config.affinity_header;
    this.logger = deps.logger.child({ engine: "openai", model: modelName });
    this.probeTimeoutMs = deps.probeTimeoutMs;
    this.failover = baseUrls.length > 1 ? new FailoverFetch(baseUrls, this.logger, deps.fetch) : null;
    const fetcher = this.failover?.fetch ?? deps.fetch;
    // The api key goes to the client only; it is never logged or put in health info.
    this.client = createOpenAiClient({
      baseUrl: this.baseUrl,
      apiKey: config.api_key,
      logger: this.logger,
      ...(fetcher !== undefined ? { fetch: fetcher } : {}),
      ...(deps.requestTimeoutMs !== undefined ? { timeoutMs: deps.requestTimeoutMs } : {}),
    });
  }

  async warmUp(options: WarmUpOptions = {}): Promise<void> {
    this.assertOpen();
    if (this.state === "ready") return;
    const { signal } = options;
    if (signal?.aborted) throw cancelledError(signal.reason);
    options.onProgress?.({ phase: "checking" });
    const probe = this.probe ?? this.startProbe();
    probe.waiters += 1;
    try {
      await raceAbort(probe.promise, signal).catch((error: unknown) => {
        // This caller gave up: it gets `cancelled`; the shared check goes on for the others.
        if (signal?.aborted === true) throw cancelledError(signal.reason);
        throw error;
      });
    } finally {
      probe.waiters -= 1;
      // Nobody waits any more: stop the check rather than leave a request running.
      if (probe.waiters === 0 && !probe.settled) probe.controller.abort();
    }
  }

  private startProbe(): Probe {
    const controller = new AbortController();
    const previous = { state: this.state, detail: this.detail };
    this.state = "starting";
    this.detail = `checking ${this.baseUrl}`;
    const probe: Probe = { controller, waiters: 0, settled: false, promise: Promise.resolve() };
    probe.promise = (async () => {
      try {
        await probeModels(this.client, {
          model: this.model,
          signal: controller.signal,
          logger: this.logger,
          ...(this.probeTimeoutMs !== undefined ? { timeoutMs: this.probeTimeoutMs } : {}),
        });
        if (!this.closed) {
          this.markReady();
          this.logger.info({ baseUrl: this.baseUrl, model: this.model }, "openai engine ready");
        }
      } catch (err) {
        if (controller.signal.aborted) {
          // Abandoned by every waiter (or closed): not a verdict on the server.
          if (!this.closed) ({ state: this.state, detail: this.detail } = previous);
        } else {
          const message = err instanceof Error ? err.message : String(err);
          this.state = "down";
          this.detail = message;
          this.logger.warn({ baseUrl: this.baseUrl, code: err instanceof RuntimeError ? err.code : undefined, err: message }, "openai engine warm-up failed");
        }
        throw err;
      } finally {
        probe.settled = true;
        // A failed or abandoned warm-up can be retried by the next caller.
        if (this.probe === probe) this.probe = undefined;
      }
    })();
    // Waiters observe the rejection through raceAbort; this keeps an abandoned probe from
    // surfacing as an unhandled rejection.
    probe.promise.catch(() => undefined);
    this.probe = probe;
    return probe;
  }

  async *generate(request: GenerateRequest): AsyncGenerator<EngineChunk, void, undefined> {
    this.assertOpen();
    const callerSignal = request.signal;
    if (callerSignal?.aborted) throw cancelledError(callerSignal.reason);
    // Linked to the caller's signal and owned by us, so close() can cancel the request too.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener("abort", onAbort, { once: true });
    this.active.add(controller);
    try {
      // The conversation's key, for a KV-aware router in front of several replicas (docs/scale-out.md).
      const key = request.cacheKey === undefined ? undefined : affinityKey(request.cacheKey);
      yield* streamOpenAiChat({
        client: this.client,
        model: this.model,
        request: { ...request, signal: controller.signal },
        logger: this.logger,
        ...(key === undefined ? {} : { extraBody: { prompt_cache_key: key }, ...(this.affinityHeader === null ? {} : { headers: { [this.affinityHeader]: key } }) }),
      });
      // A full answer proves the server works, whether or not warmUp was ever called.
      if (!this.closed) this.markReady();
    } catch (err) {
      if (isServerLevel(err) && !this.closed) {
        this.state = "down";
        this.detail = err.message;
      }
      throw err;
    } finally {
      callerSignal?.removeEventListener("abort", onAbort);
      this.active.delete(controller);
    }
  }

  /** Passed through to the upstream's /embeddings; it decides which models embed. */
  async embed(request: EmbedRequest): Promise<EmbedResult> {
    this.assertOpen();
    const link = this.linked(request.signal);
    try {
      return await embedViaOpenAi(this.client, this.model, { ...request, signal: link.signal });
    } finally {
      link.done();
    }
  }

  /** Passed through to the upstream's /rerank (Jina / Cohere / vLLM shape); it decides which models rerank. */
  async rerank(request: RerankRequest): Promise<RerankResult> {
    this.assertOpen();
    const link = this.linked(request.signal);
    try {
      return await rerankViaOpenAi(this.client, this.model, { ...request, signal: link.signal });
    } finally {
      link.done();
    }
  }

  /** Passed through to the upstream's /completions (suffix included: the upstream decides). */
  async *complete(request: CompletionRequest): AsyncGenerator<CompletionChunk, void, undefined> {
    this.assertOpen();
    const link = this.linked(request.signal);
    try {
      yield* streamOpenAiCompletion({ client: this.client, model: this.model, request: { ...request, signal: link.signal }, logger: this.logger });
    } finally {
      link.done();
    }
  }

  /** A signal that the caller's abort and close() both fire. */
  private linked(callerSignal: AbortSignal | undefined): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted === true) controller.abort(callerSignal.reason);
    callerSignal?.addEventListener("abort", onAbort, { once: true });
    this.active.add(controller);
    return {
      signal: controller.signal,
      done: () => {
        callerSignal?.removeEventListener("abort", onAbort);
        this.active.delete(controller);
      },
    };
  }

  health(): EngineHealth {
    return {
      state: this.state,
      degradationTier: "NORMAL",
      ...(this.detail !== undefined ? { detail: this.detail } : {}),
      info: { base_url: this.baseUrl, model: this.model, active_requests: this.active.size, ...(this.failover === null ? {} : { endpoints: this.failover.states() }) },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.probe?.controller.abort();
    for (const controller of this.active) controller.abort(new Error("engine closed"));
    this.state = "stopped";
    this.detail = "closed";
  }

  private markReady(): void {
    this.state = "ready";
    this.detail = undefined;
  }

  private assertOpen(): void {
    if (this.closed) throw new RuntimeError("engine_unavailable", `The openai engine for model "${this.modelName}" is closed`);
  }
}
