import type { PromptTimings } from "../../wire/prompt-timings.js";
import { createHash, randomBytes } from "node:crypto";
import type { TurnOutcome } from "../../agent/turn-outcome.js";

export type TextBlock = { type: "text"; text: string; citations: null };
export type ThinkingBlock = { type: "thinking"; thinking: string; signature: string };
export type ToolUseBlock = { type: "tool_use"; id: string; name: string; input: unknown; caller: { type: "direct" } };
export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock;

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

/** Usage as the API defines it: input + cache read + cache creation (always 0 here) is the whole prompt. */
export interface MessageUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  cache_creation: null;
  server_tool_use: null;
  service_tier: null;
  inference_geo: null;
  output_tokens_details: null;
  speed: null;
}

export interface MessageObject {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  stop_details: null;
  container: null;
  diagnostics: null;
  usage: MessageUsage;
  local_ai: { request_id?: string; trace_id: string | null; warnings: string[]; degradation_tier: string; timings?: PromptTimings };
}

export const newMessageId = (): string => `msg_${randomBytes(12).toString("hex")}`;

/** `prompt`: every prompt token; `cached`: those served from the KV cache (null: unknown, counted as evaluated). */
export function messageUsage(prompt: number, cached: number | null, output: number): MessageUsage {
  const read = Math.min(prompt, cached ?? 0);
  return {
    input_tokens: prompt - read,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: read,
    output_tokens: output,
    cache_creation: null,
    server_tool_use: null,
    service_tier: null,
    inference_geo: null,
    output_tokens_details: null,
    speed: null,
  };
}

/**
 * The turn's ending in the API's terms. `stop_sequence` where the engine says which stop string
 * ended the text (embedded); elsewhere such a stop reads `end_turn` (documented).
 */
export function stopReasonOf(outcome: TurnOutcome): StopReason {
  switch (outcome.finish_reason) {
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
    case "stop":
      return outcome.stop_sequence === undefined ? "end_turn" : "stop_sequence";
    default:
      return "end_turn";
  }
}

/** Opaque to clients (documented): a digest of the thinking text, so that a block carries a stable value. */
export const signatureOf = (thinking: string): string => `local-ai.${createHash("sha256").update(thinking).digest("base64url")}`;

/** A tool call's arguments as the `input` object; text that is not a JSON object reads as {} (with a warning). */
export function toolInput(args: string): { input: Record<string, unknown>; valid: boolean } {
  try {
    const parsed = JSON.parse(args === "" ? "{}" : args) as unknown;
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return { input: parsed as Record<string, unknown>, valid: true };
  } catch {
    // falls through
  }
  return { input: {}, valid: false };
}
