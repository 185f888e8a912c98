// The llama-server engine: a supervised llama.cpp server child per model, spoken to through the
// official openai client (the same stream mapping as the `openai` engine).
import OpenAI from "openai";
import type { ModelConfig } from "../../config/schema.js";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError, toRuntimeError } from "../../shared/runtime-error.js";
import type { EngineChunk, GenerateRequest, ToolSpec } from "../chat-types.js";
import type { CompletionChunk, CompletionRequest } from "../completion-types.js";
import { embeddingsEnabled, visionEnabled } from "../describe-model.js";
import type { EmbedRequest, EmbedResult } from "../embedding-types.js";
import type { Engine, EngineCapabilities, EngineHealth, WarmUpOptions } from "../engine.js";
import type { ModelFileResolver } from "../model-file.js";
import { streamOpenAiChat } from "../openai/openai-chat-stream.js";
import { SlotAffinity } from "./slot-affinity.js";
import { ServerTokens } from "./server-tokens.js";
import { streamOpenAiCompletion } from "../openai/openai-completion-stream.js";
import { embedViaOpenAi } from "../openai/openai-embeddings.js";
import type { LaunchedServer } from "./launch.js";
import { errorExcerpt } from "./error-excerpt.js";
import { readSlots, type SlotState } from "./server-http.js";
import { ServerSupervisor } from "./supervisor.js";
import { DEFAULT_SUPERVISOR_TUNING, type SupervisorTuning } from "./tuning.js";
import { delay as sleep } from "../../shared/abort.js";

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
  /** Timing overrides (tests use a short cool-down); defaults in DEFAULT_SUPERVISOR_TUNING. */
  tuning?: Partial<SupervisorTuning>;
  /** The local file of the model (its `path`, or the download of a reference); `path` by default. */
  modelFile?: ModelFileResolver;
}

/** After an abort the slot must be idle within this long, or the server is restarted. */
const ABORT_SETTLE_MS = 1000;
/** A failed stream: wait this long for the child's exit to tell a crash from an HTTP error. */
const CRASH_CONFIRM_MS = 500;

export class LlamaServerEngine implements Engine {
  readonly kind = "llama-server";
  /** Images only with a multimodal projector in extra_args; tool_choice goes to llama-server as is. */
  readonly capabilities: EngineCapabilities;
  private readonly log: Logger;
  private readonly supervisor: ServerSupervisor;
  private readonly clients = new WeakMap<LaunchedServer, OpenAI>();
  /** Generations in flight per server (the abort check tolerates this many busy slots). */
  private readonly inFlight = new Map<LaunchedServer, number>();
  private readonly active = new Set<AbortController>();
  private readonly background = new Set<Promise<void>>();
  private readonly lifetime = new AbortController();
  /** extra_args asked for `--embeddings` (opt-in: older llama.cpp builds then refuse chat). */
  private readonly embeddings: boolean;
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
      base: { ctxSize: modelConfig.ctx_size, gpuLayers: deps.gpuLayers },
      logger: this.log,
      tuning,
    });
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

  /** llama-server's own /v1/completions (its `suffix` is infill where the model has FIM tokens). */
  complete(request: CompletionRequest): AsyncIterable<CompletionChunk> {
    return this.onServer(request.signal, (client, signal) => streamOpenAiCompletion({ client, model: this.modelName, request: { ...request, signal }, logger: this.log }));
  }

  /**
   * One request on the running server with the same guarantees as chat: the caller's abort and
   * close() end it, a crash mid-request becomes engine_unavailable, and after an abort the slot
   * must go idle (checkStopped).
   */
  private async *onServer<T>(callerSignal: AbortSignal | undefined, work: (client: OpenAI, signal: AbortSignal) => AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    const server = await this.supervisor.ensureReady(callerSignal);
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener("abort", onAbort, { once: true });
    if (callerSignal?.aborted === true) controller.abort(callerSignal.reason);
    this.active.add(controller);
    this.inFlight.set(server, (this.inFlight.get(server) ?? 0) + 1);
    let outcome: "done" | "crashed" | "stopped" = "stopped";
    try {
      yield* work(this.clientFor(server), controller.signal);
      outcome = "done";
    } catch (error) {
      const failure = toRuntimeError(error);
      if (failure.code === "cancelled" || failure.code === "invalid_request") throw failure;
      const crash = await this.crashError(server, failure);
      if (crash !== null) outcome = "crashed";
      throw crash ?? failure;
    } finally {
      callerSignal?.removeEventListener("abort", onAbort);
      this.active.delete(controller);
      const left = (this.inFlight.get(server) ?? 1) - 1;
      if (left > 0) this.inFlight.set(server, left);
      else this.inFlight.delete(server);
      if (outcome === "stopped") this.track(this.checkStopped(server));
    }
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
    this.lifetime.abort();
    for (const controller of this.active) controller.abort(new RuntimeError("shutting_down", "The engine is closing"));
    await this.supervisor.close();
    await Promise.allSettled([...this.background]);
  }

  private async *stream(request: GenerateRequest): AsyncGenerator<EngineChunk, void, undefined> {
    const server = await this.supervisor.ensureReady(request.signal);
    // Our own controller: the caller's abort and close() both end the request.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    if (request.signal?.aborted === true) controller.abort(request.signal.reason);
    this.active.add(controller);
    this.inFlight.set(server, (this.inFlight.get(server) ?? 0) + 1);
    const slot = this.slotAffinity.acquire(request.cacheKey);
    let outcome: "done" | "crashed" | "stopped" = "stopped";
    try {
      // cache_prompt: the slot keeps the prompt's KV cache; id_slot: the same conversation goes back to it.
      const extraBody = { cache_prompt: true, ...(slot === null ? {} : { id_slot: slot }) };
      yield* streamOpenAiChat({ client: this.clientFor(server), model: this.modelName, request: { ...request, signal: controller.signal }, extraBody, logger: this.log });
      outcome = "done";
    } catch (error) {
      const failure = toRuntimeError(error);
      if (failure.code === "cancelled") throw failure;
      const crash = await this.crashError(server, failure);
      if (crash !== null) outcome = "crashed";
      throw crash ?? failure;
    } finally {
      request.signal?.removeEventListener("abort", onAbort);
      this.active.delete(controller);
      this.slotAffinity.release(slot);
      const left = (this.inFlight.get(server) ?? 1) - 1;
      if (left > 0) this.inFlight.set(server, left);
      else this.inFlight.delete(server);
      // Aborted, failed, or the consumer stopped early: the server must really stop generating.
      if (outcome === "stopped") this.track(this.checkStopped(server));
    }
  }

  private clientFor(server: LaunchedServer): OpenAI {
    let client = this.clients.get(server);
    if (client === undefined) {
      client = new OpenAI({ baseURL: `${server.endpoint.origin}/v1`, apiKey: server.endpoint.apiKey, maxRetries: 0 });
      this.clients.set(server, client);
    }
    return client;
  }

  /** A stream failure caused by the child dying becomes engine_unavailable with its last words. */
  private async crashError(server: LaunchedServer, failure: RuntimeError): Promise<RuntimeError | null> {
    const exited = await Promise.race([server.process.exited, sleep(CRASH_CONFIRM_MS, undefined, { unref: true }).then(() => null)]);
    if (exited === null) return null;
    const how = exited.signal !== null ? `was killed by ${exited.signal}` : `exited with code ${exited.code}`;
    const tail = errorExcerpt(this.supervisor.outputTail(60));
    return new RuntimeError(
      "engine_unavailable",
      `llama-server for model "${this.modelName}" ${how} during generation; it is being restarted${tail.length > 0 ? `. Last output: ${tail.join(" | ")}` : ""}`,
      { cause: failure, details: { pid: server.process.pid, exit_code: exited.code, exit_signal: exited.signal, stderr_tail: tail } },
    );
  }

  /**
   * After an abort the server's busy slots must drop to the generations still in flight within
   * ABORT_SETTLE_MS; a server that keeps generating for nobody is restarted.
   */
  private async checkStopped(server: LaunchedServer): Promise<void> {
    const deadline = Date.now() + ABORT_SETTLE_MS;
    const signal = this.lifetime.signal;
    for (;;) {
      if (!server.process.running || signal.aborted) return;
      const slots = await readSlots(server.endpoint, signal);
      if (slots === null) return; // this build has no /slots: nothing to check with
      const busy = slots.filter((slot) => slot.processing).length;
      if (busy <= (this.inFlight.get(server) ?? 0)) return;
      if (Date.now() >= deadline) {
        this.supervisor.requestRestart(server, `a slot kept generating ${ABORT_SETTLE_MS} ms after its request was aborted`);
        return;
      }
      await sleep(50, signal);
    }
  }

  private track(task: Promise<void>): void {
    const guarded = task.catch((error: unknown) => {
      if (!this.lifetime.signal.aborted) this.log.debug({ err: (error as Error).message }, "post-abort slot check failed");
    });
    this.background.add(guarded);
    void guarded.finally(() => this.background.delete(guarded));
  }
}
