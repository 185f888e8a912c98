// The llama-server engine: a supervised llama.cpp server child per model, spoken to through the
// official openai client (the same stream mapping as the `openai` engine).
import type { ModelConfig } from "../../config/schema.js";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError, type ErrorCode } from "../../shared/runtime-error.js";
import type { ChildRegistry } from "../../shared/process/child-registry.js";
import type { EngineChunk, GenerateRequest, PromptProgress } from "../chat-types.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import type { CompletionChunk, CompletionRequest } from "../completion-types.js";
import type OpenAI from "openai";
import { embeddingsEnabled, rerankEnabled, visionEnabled } from "./server-features.js";
import type { RerankRequest, RerankResult } from "../rerank-types.js";
import type { DetokenizeRequest, TokenizeRequest, TokenizeResult } from "../tokenize-types.js";
import { rerankViaOpenAi } from "../openai/openai-rerank.js";
import { serverDetokenize, serverTokenize } from "./server-tokenizer.js";
import type { EmbedRequest, EmbedResult } from "../embedding-types.js";
import type { Engine, EngineCapabilities, EngineHealth, WarmUpOptions } from "../engine.js";
import type { ModelFileResolver } from "../model-file.js";
import { streamOpenAiChat } from "../openai/openai-chat-stream.js";
import { SlotAffinity } from "./slot-affinity.js";
import { PromptPace } from "./prompt-pace.js";
import { ServerTokens } from "./server-tokens.js";
import { streamOpenAiCompletion } from "../openai/openai-completion-stream.js";
import { embedViaOpenAi } from "../openai/openai-embeddings.js";
import type { HelpProbe } from "./help-probe.js";
import type { LaunchedServer } from "./launch.js";
import { readSlots, type SlotState } from "./server-http.js";
import { ServerRequests } from "./server-requests.js";
import { ServerSupervisor } from "./supervisor.js";
import { DEFAULT_SUPERVISOR_TUNING, type SupervisorTuning } from "./tuning.js";

export interface LlamaServerEngineDeps {
  /** Resolved llama.binary (absolute path or a name on PATH resolved by the caller). */
  binary: string;
  /** app.data_dir: the pid file lives in <data_dir>/run/. */
  dataDir: string;
  logger: Logger;
  /** Resolved from the model's `threads` (auto -> a number); <= 0 lets llama-server choose. */
  threads: number;
  /** Resolved from the model's `gpu_layers`; negative lets llama-server choose. */
  gpuLayers: number;
  /** Server slots = concurrent generations. */
  parallel: number;
  /** Timing overrides (llama.restart through createEngine; tests shrink the rest); defaults in DEFAULT_SUPERVISOR_TUNING. */
  tuning?: Partial<SupervisorTuning>;
  /** The local file of the model (its `path`, or the download of a reference); `path` by default. */
  modelFile?: ModelFileResolver;
  /** The runtime's child processes: the server's group is registered while it runs. */
  children: ChildRegistry;
  /** The runtime's cache of which flags the binary has. */
  helpProbe: HelpProbe;
}

/** A chat's server error is checked for a crash; other requests' refusals are the caller's. */
const CHAT_PASS_THROUGH: readonly ErrorCode[] = ["cancelled"];
const REQUEST_PASS_THROUGH: readonly ErrorCode[] = ["cancelled", "invalid_request"];

export class LlamaServerEngine implements Engine {
  readonly kind = "llama-server";
  /** Images only with a multimodal projector in extra_args; tool_choice goes to llama-server as is. */
  readonly capabilities: EngineCapabilities;
  private readonly log: Logger;
  private readonly supervisor: ServerSupervisor;
  private readonly requests: ServerRequests;
  /** extra_args asked for `--embeddings` (opt-in: older llama.cpp builds then refuse chat). */
  private readonly embeddings: boolean;
  /** Launched with --reranking (llama.models.<name>.rerank, or the flag in extra_args). */
  private readonly reranking: boolean;
  /** Which conversation each server slot holds (the slots are `parallel`). */
  private readonly slotAffinity: SlotAffinity;
  /** Token counts for the context budget, from the server's own tokenizer and chat template. */
  private readonly tokens: ServerTokens;
  /** A slot's context on the server last warmed up (learnt from /props once per launch). */
  private slotContext: { server: LaunchedServer; tokens: number | null } | null = null;

  constructor(
    readonly modelName: string,
    modelConfig: ModelConfig,
    deps: LlamaServerEngineDeps,
  ) {
    if (modelConfig.path === null) {
      throw new RuntimeError("config_invalid", `llama.models.${modelName}.path is required for the llama-server engine`, {
        details: { config_key: `llama.models.${modelName}.path` },
      });
    }
    this.log = deps.logger.child({ component: "llama-server", model: modelName });
    this.embeddings = embeddingsEnabled(modelConfig);
    this.reranking = rerankEnabled(modelConfig);
    this.slotAffinity = new SlotAffinity(deps.parallel);
    this.tokens = new ServerTokens(this.log);
    this.capabilities = { images: visionEnabled(modelConfig), requiredToolChoice: true };
    const tuning = { ...DEFAULT_SUPERVISOR_TUNING, ...deps.tuning };
    this.supervisor = new ServerSupervisor({
      modelName,
      binary: deps.binary,
      modelPath: modelConfig.path,
      ...(deps.modelFile ? { modelFile: deps.modelFile } : {}),
      port: modelConfig.port,
      dataDir: deps.dataDir,
      threads: deps.threads,
      parallel: deps.parallel,
      extraArgs: modelConfig.extra_args,
      rerank: modelConfig.rerank,
      base: { ctxSize: modelConfig.ctx_size, gpuLayers: deps.gpuLayers },
      logger: this.log,
      tuning,
      children: deps.children,
      helpProbe: deps.helpProbe,
    });
    this.requests = new ServerRequests(modelName, this.supervisor, this.log);
  }

  /** Idempotent; concurrent callers share one start. Aborting stops this caller's wait only. */
  async warmUp(options: WarmUpOptions = {}): Promise<void> {
    const server = await this.supervisor.ensureReady(options.signal, options.onProgress);
    // Each launch (a restart may be on a reduced-context tier) is asked once what a slot holds.
    if (this.slotContext?.server !== server) this.slotContext = { server, tokens: await this.tokens.slotContext(server.endpoint, options.signal) };
  }

  /**
   * The context one conversation has: llama-server divides `ctx_size` among its `parallel` slots,
   * so this is what the context budget must fit (null until a warm-up has asked the server).
   */
  contextLength(): number | null {
    return this.slotContext?.tokens ?? null;
  }

  /** Counted by the server's tokenizer (/tokenize). */
  async countTokens(text: string, signal?: AbortSignal): Promise<number> {
    const server = await this.supervisor.ensureReady(signal);
    return this.tokens.count(server.endpoint, text, signal);
  }

  /** The whole prompt of a chat request, rendered by the server's template and tokenized; null where this build cannot. */
  async promptTokens(request: Pick<GenerateRequest, "messages" | "tools">, signal?: AbortSignal): Promise<number | null> {
    const server = await this.supervisor.ensureReady(signal);
    return this.tokens.promptTokens(server.endpoint, request.messages, request.tools ?? [], signal);
  }

  /** What the model's chat template adds for these tools, rendered by the server (/apply-template) and tokenized. */
  async toolTokens(tools: readonly ToolSpec[], signal?: AbortSignal): Promise<number> {
    const server = await this.supervisor.ensureReady(signal);
    return this.tokens.toolTokens(server.endpoint, tools, signal);
  }

  health(): EngineHealth {
    return this.supervisor.health();
  }

  generate(request: GenerateRequest): AsyncIterable<EngineChunk> {
    return this.stream(request);
  }

  /**
   * llama-server's own /v1/embeddings, only when extra_args has `--embeddings` (with a `--pooling`
   * other than none): launching every server with it would break chat on older llama.cpp builds,
   * which refuse completions in embeddings mode.
   */
  async embed(request: EmbedRequest): Promise<EmbedResult> {
    if (!this.embeddings) {
      throw new RuntimeError("invalid_request", `Model "${this.modelName}" (engine llama-server) was not started with --embeddings; add it (and --pooling last) to llama.models.${this.modelName}.extra_args`, {
        details: { param: "model", openai_code: "embeddings_not_supported" },
      });
    }
    const model = this.modelName;
    let result: EmbedResult | undefined;
    // Run to the end (not return from inside the loop) so onServer records a finished request.
    for await (const answer of this.onServer(request.signal, async function* (client, signal) {
      yield await embedViaOpenAi(client, model, { ...request, signal });
    })) {
      result = answer;
    }
    if (result === undefined) throw new RuntimeError("engine_error", `llama-server for model "${this.modelName}" returned no embeddings`);
    return result;
  }

  /** llama-server's own /v1/rerank, only when launched with --reranking (the server then serves no chat). */
  async rerank(request: RerankRequest): Promise<RerankResult> {
    if (!this.reranking) {
      throw new RuntimeError("invalid_request", `Model "${this.modelName}" (engine llama-server) cannot rerank: it is not a reranker; set llama.models.${this.modelName}.rerank: true on a reranker GGUF`, {
        details: { param: "model", openai_code: "rerank_not_supported" },
      });
    }
    const model = this.modelName;
    let result: RerankResult | undefined;
    for await (const answer of this.onServer(request.signal, async function* (client, signal) {
      yield await rerankViaOpenAi(client, model, { ...request, signal });
    })) {
      result = answer;
    }
    if (result === undefined) throw new RuntimeError("engine_error", `llama-server for model "${this.modelName}" returned no rerank scores`);
    return result;
  }

  /** The server's own tokenizer (/tokenize). */
  async tokenize(request: TokenizeRequest): Promise<TokenizeResult> {
    const server = await this.supervisor.ensureReady(request.signal);
    return serverTokenize(server.endpoint, this.modelName, request);
  }

  /** The server's own /detokenize. */
  async detokenize(request: DetokenizeRequest): Promise<string> {
    const server = await this.supervisor.ensureReady(request.signal);
    return serverDetokenize(server.endpoint, this.modelName, request.tokens, request.signal);
  }

  /** llama-server's own /v1/completions (its `suffix` is infill where the model has FIM tokens). */
  complete(request: CompletionRequest): AsyncIterable<CompletionChunk> {
    return this.onServer(request.signal, (client, signal) => streamOpenAiCompletion({ client, model: this.modelName, request: { ...request, signal }, logger: this.log }));
  }

  /** One request on the running server with the same guarantees as chat (server-requests.ts). */
  private async *onServer<T>(callerSignal: AbortSignal | undefined, work: (client: OpenAI, signal: AbortSignal) => AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    const server = await this.supervisor.ensureReady(callerSignal);
    yield* this.requests.run(server, callerSignal, { passThrough: REQUEST_PASS_THROUGH }, work);
  }

  /** The server's slots right now (null when not running or /slots is off); for doctor and tests. */
  async slots(signal?: AbortSignal): Promise<SlotState[] | null> {
    const health = this.supervisor.health();
    if (health.state !== "ready" && health.state !== "degraded") return null;
    const server = await this.supervisor.ensureReady(signal);
    return readSlots(server.endpoint, signal);
  }

  /** The child's last output lines (doctor). */
  outputTail(count = 20): string[] {
    return this.supervisor.outputTail(count);
  }

  async close(): Promise<void> {
    const requests = this.requests.close();
    await this.supervisor.close();
    await requests;
  }

  private async *stream(request: GenerateRequest): AsyncGenerator<EngineChunk, void, undefined> {
    const server = await this.supervisor.ensureReady(request.signal);
    const slot = this.slotAffinity.acquire(request.cacheKey);
    // The prompt's reading pace, from its progress chunks: how long a cancel mid-prompt may take to land.
    const pace = new PromptPace();
    const onPromptProgress = (progress: PromptProgress): void => {
      pace.observe(progress);
      request.onPromptProgress?.(progress);
    };
    try {
      // cache_prompt: the slot keeps the prompt's KV cache; id_slot: the same conversation goes back to it.
      const extraBody = {
        cache_prompt: true,
        ...(slot === null ? {} : { id_slot: slot }),
        // prompt_progress chunks while the prompt is read (one per batch): the turn's prompt_progress events, and the pace.
        return_progress: true,
        ...(request.topK === undefined ? {} : { top_k: request.topK }),
        // Templates with a thinking switch (Qwen 3, DeepSeek, GLM...) read it; others ignore it.
        ...(request.reasoningEffort === "none" || request.reasoningEffort === "minimal" ? { chat_template_kwargs: { enable_thinking: false } } : {}),
      };
      const options = { passThrough: CHAT_PASS_THROUGH, settleMs: () => pace.settleMs() };
      yield* this.requests.run(server, request.signal, options, (client, signal) =>
        streamOpenAiChat({ client, model: this.modelName, request: { ...request, signal, onPromptProgress }, extraBody, logger: this.log }),
      );
    } finally {
      this.slotAffinity.release(slot);
    }
  }
}
