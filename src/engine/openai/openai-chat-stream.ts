// One streamed chat completion against any OpenAI-compatible server (vLLM, Ollama, LM Studio,
// llama-server), mapped to our EngineChunk stream. Shared by the `openai` and `llama-server`
// engines, so everything engine-specific (which client, which extra body fields) is a parameter.
import type OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { EngineChunk, FinishReason, GenerateRequest, PromptProgress } from "../chat-types.js";
import { toEngineError, type UpstreamContext } from "./openai-errors.js";
import { UpstreamRequest } from "./upstream-request.js";
import { buildChatBody } from "./openai-request.js";
import { ToolCallAccumulator } from "./tool-call-accumulator.js";

export interface OpenAiChatStreamOptions {
  client: OpenAI;
  model: string;
  request: GenerateRequest;
  /** extra body fields, e.g. llama-server's cache_prompt, id_slot (they cannot override model/messages/stream). */
  extraBody?: Record<string, unknown>;
  /** Extra request headers (the openai engine's affinity header). */
  headers?: Record<string, string>;
  logger?: Logger;
}

/**
 * Streams text / reasoning / tool-call / usage chunks and exactly one `end`.
 * - Aborting `request.signal` closes the HTTP request at once; the iterator then throws
 *   RuntimeError("cancelled") and yields nothing more.
 * - A consumer that stops iterating (break / return) aborts the request too: the response is
 *   never left open.
 * - Failures are RuntimeError: engine_unavailable, engine_auth, model_missing, engine_error.
 */
export function streamOpenAiChat(options: OpenAiChatStreamOptions): AsyncIterable<EngineChunk> {
  return runChatStream(options);
}

/** OpenAI finish reasons -> ours; unknown values (vendor extras) count as stop. */
function mapFinishReason(reason: string): FinishReason {
  switch (reason) {
    case "length":
      return "length";
    case "content_filter":
      return "content_filter";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    default:
      return "stop";
  }
}

/** llama.cpp's end-of-reply chat parse failing ("The model produced output that does not match the expected <format> format"). */
function isChatFormatParseFailure(err: unknown): boolean {
  return err instanceof Error && /The model produced output that does not match the expected \S+ format/.test(err.message);
}

/** `reasoning_content` is not in the OpenAI types (llama-server / DeepSeek extension): read it raw. */
function reasoningOf(delta: object): string {
  const value = (delta as { reasoning_content?: unknown }).reasoning_content;
  return typeof value === "string" ? value : "";
}

/** llama-server's `timings.prompt_ms` on a chunk, rounded; undefined when absent. */
function promptMsOf(chunk: ChatCompletionChunk): number | undefined {
  const timings = (chunk as unknown as { timings?: { prompt_ms?: unknown } }).timings;
  return typeof timings?.prompt_ms === "number" && Number.isFinite(timings.prompt_ms) ? Math.round(timings.prompt_ms) : undefined;
}

/** llama-server's `prompt_progress: {total, cache, processed, time_ms}` on a chunk, as our PromptProgress; null when absent or malformed. */
function promptProgressOf(chunk: ChatCompletionChunk): PromptProgress | null {
  const raw = (chunk as unknown as { prompt_progress?: unknown }).prompt_progress;
  if (typeof raw !== "object" || raw === null) return null;
  const { total, cache, processed } = raw as Record<string, unknown>;
  if (typeof total !== "number" || typeof processed !== "number") return null;
  const cached = typeof cache === "number" ? cache : 0;
  return { total, cached, processed: Math.min(total, Math.max(processed, cached)) };
}

async function* runChatStream(options: OpenAiChatStreamOptions): AsyncGenerator<EngineChunk, void, undefined> {
  const { client, model, request, logger } = options;
  const context: UpstreamContext = { baseUrl: client.baseURL, model };
  const upstream = new UpstreamRequest(request.signal);
  const isAborted = (): boolean => upstream.isAborted();

  try {
    logger?.debug({ baseUrl: context.baseUrl, model, messages: request.messages.length, tools: request.tools?.length ?? 0 }, "openai chat request");
    let stream: AsyncIterable<ChatCompletionChunk>;
    try {
      stream = await client.chat.completions.create(buildChatBody(model, request, options.extraBody), {
        signal: upstream.signal,
        ...(options.headers === undefined ? {} : { headers: options.headers }),
      });
    } catch (err) {
      throw toEngineError(err, context, isAborted());
    }

    const toolCalls = new ToolCallAccumulator();
    let finishReason: string | null = null;
    let streamedText = false;
    let usage: { inputTokens: number; outputTokens: number; cachedTokens?: number } | null = null;
    // llama-server's `timings.prompt_ms` (its last chunk); other servers send none.
    let promptMs: number | undefined;

    try {
      for await (const chunk of stream) {
        // The SDK ends the iteration quietly on abort; we turn that into `cancelled` below.
        if (isAborted()) break;
        const out: EngineChunk[] = [];
        // llama-server's `return_progress` chunks (no choices) while it reads the prompt.
        const progress = promptProgressOf(chunk);
        if (progress !== null) request.onPromptProgress?.(progress);
        promptMs = promptMsOf(chunk) ?? promptMs;
        // Only choice 0 is ours (we never ask for n > 1); the usage chunk has no choices at all.
        const choice = chunk.choices.find((c) => c.index === 0) ?? chunk.choices[0];
        if (choice !== undefined) {
          const delta = choice.delta ?? {};
          const reasoning = reasoningOf(delta);
          if (reasoning !== "") out.push({ type: "reasoning", delta: reasoning });
          if (typeof delta.content === "string" && delta.content !== "") {
            out.push({ type: "text", delta: delta.content });
            streamedText = true;
          }
          for (const call of delta.tool_calls ?? []) out.push(...toolCalls.push(call));
          if (choice.finish_reason !== null && choice.finish_reason !== undefined) finishReason = choice.finish_reason;
        }
        // Kept until the end: some servers repeat (cumulative) usage; the last one is the total.
        if (chunk.usage !== undefined && chunk.usage !== null) {
          const cached = chunk.usage.prompt_tokens_details?.cached_tokens;
          usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens, ...(typeof cached === "number" ? { cachedTokens: cached } : {}) };
        }
        for (const item of out) {
          if (isAborted()) break;
          yield item;
        }
      }
    } catch (err) {
      // llama.cpp streams the text as it comes and parses the whole reply into its chat format only
      // at the end; a reply it cannot parse (invalid UTF-8 from a model, text its template's parser
      // does not expect) ends the stream with an error although the text is all there. That text is
      // the answer: keep it rather than fail the turn. Never when a tool call was under way.
      if (isAborted() || !streamedText || toolCalls.size > 0 || !isChatFormatParseFailure(err)) throw toEngineError(err, context, isAborted());
      logger?.warn({ baseUrl: context.baseUrl, model, err: (err as Error).message }, "the server could not parse the reply into its chat format at the end; the streamed text is kept as the answer");
      finishReason = "stop";
    }
    if (isAborted()) throw upstream.cancelled();
    if (finishReason === null) {
      // The SDK hides [DONE]; a finish_reason is what every compatible server sends before it, so its
      // absence means the stream was cut (server crash, proxy timeout, error line we cannot parse).
      throw new RuntimeError("engine_error", `The stream from ${context.baseUrl} ended before the model finished (no finish_reason)`, {
        details: { base_url: context.baseUrl },
      });
    }

    const tail: EngineChunk[] = [...toolCalls.finish()];
    if (usage !== null) tail.push({ type: "usage", ...usage, ...(promptMs === undefined ? {} : { promptMs }) });
    // Servers that emit tool calls but say "stop" (several llama.cpp versions) still mean tool_calls.
    const mapped: FinishReason = toolCalls.size > 0 ? "tool_calls" : mapFinishReason(finishReason);
    tail.push({ type: "end", finishReason: mapped });
    for (const item of tail) {
      if (isAborted()) throw upstream.cancelled();
      yield item;
    }
    upstream.complete();
    logger?.debug({ model, finishReason: mapped, usage }, "openai chat finished");
  } finally {
    // Error, abort or a consumer that stopped early: make sure the HTTP response is closed.
    upstream.close();
  }
}
