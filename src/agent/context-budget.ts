import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { Engine } from "../engine/engine.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { messageTokens } from "./message-tokens.js";
import { estimateTokens } from "./prompt.js";

export interface ContextBudgetInput {
  engine: Engine;
  agentName: string;
  modelName: string;
  /** Rendered for the model (preambles merged). */
  system: ChatMessage;
  history: readonly ChatMessage[];
  turn: readonly ChatMessage[];
  tools: readonly ToolSpec[];
  ctxSize: number;
  maxTokens: number;
  signal: AbortSignal;
}

/**
 * System prompt + tool schemas + as much history as fits + the current turn, counted with the
 * model's tokenizer where the engine has one (an estimate elsewhere). History is dropped
 * oldest-first in whole turns (a cut lands on a user message, so tool calls keep their results),
 * half the window at a time (as llama.cpp's context shift discards half) so that the cut, and
 * with it the cached prefix, stays put for the next turns (stableCut).
 * What cannot fit is a `context_overflow` error with the numbers, never a silent truncation:
 * tool schemas that leave no room name `ctx_size` and `agents.<name>.tools`; an input too long
 * for the window says how long it is.
 */
export async function fitContext(input: ContextBudgetInput): Promise<{ context: ChatMessage[]; droppedMessages: number }> {
  const { engine } = input;
  const count = async (text: string): Promise<number> => (engine.countTokens ? engine.countTokens(text, input.signal) : estimateTokens([{ role: "system", content: text }]));
  const cost = (message: ChatMessage): Promise<number> => messageTokens(message, count);
  const window = engine.contextLength?.() ?? input.ctxSize;
  // Room kept for the reply: max_tokens, but never more than a quarter of the window (a max_tokens
  // as large as the window is legal: the engines shift the context when a reply runs that long).
  const reserve = Math.min(input.maxTokens, Math.floor(window / 4));
  const available = window - reserve;
  // The engine's window may be smaller than ctx_size (the GGUF's training context; llama-server
  // divides ctx_size among its slots): say which, so the numbers add up for the reader.
  const windowText = window === input.ctxSize ? `ctx_size ${window}` : `a context window of ${window} tokens (from ctx_size ${input.ctxSize})`;
  const systemTokens = await cost(input.system);
  // Tools as the model's chat template renders them (embedded: node-llama-cpp's wrapper;
  // llama-server: its /apply-template); an openai upstream renders them out of sight: not counted.
  const toolTokens = input.tools.length === 0 || engine.toolTokens === undefined ? 0 : await engine.toolTokens(input.tools, input.signal);
  const details = { ctx_size: window, reply_reserve: reserve, system_tokens: systemTokens, tool_tokens: toolTokens, tools: input.tools.length };
  if (systemTokens + toolTokens >= available) {
    throw new RuntimeError(
      "context_overflow",
      `The system prompt (${systemTokens} tokens) and the schemas of ${input.tools.length} tools (${toolTokens} tokens) leave no room in the context window: ${windowText} minus ${reserve} kept for the reply is ${available}. Raise llama.models.${input.modelName}.ctx_size, lower agents.${input.agentName}.max_tokens, or narrow agents.${input.agentName}.tools`,
      { details: { ...details, config_key: `agents.${input.agentName}.tools` } },
    );
  }
  let turnTokens = 0;
  for (const message of input.turn) turnTokens += await cost(message);
  if (systemTokens + toolTokens + turnTokens > available) {
    throw new RuntimeError(
      "context_overflow",
      `The input does not fit the context window: ${turnTokens} tokens for this turn, ${systemTokens + toolTokens} for the system prompt and tools, ${available} available (${windowText} minus ${reserve} kept for the reply). Send a shorter input or raise llama.models.${input.modelName}.ctx_size`,
      { details: { ...details, input_tokens: turnTokens, config_key: `llama.models.${input.modelName}.ctx_size` } },
    );
  }
  const budget = available - systemTokens - toolTokens - turnTokens;
  const costs = await Promise.all(input.history.map(cost));
  const start = stableCut(input.history, costs, budget, Math.max(1, Math.floor(window / 2))) ?? tightCut(input.history, costs, budget);
  return { context: [input.system, ...input.history.slice(start)], droppedMessages: start };
}

/**
 * Where kept history starts when it must be trimmed, chosen so that it stays put for many turns:
 * the KV cache (both engines) reuses only an unchanged prefix, and a cut that moved by one turn
 * every turn (keep as much as fits) would make every turn of a long conversation evaluate its
 * whole prompt again. Candidate cuts are the first user message at or after each multiple of
 * `step` tokens, counted from the start of the history; history only grows at its end, so these
 * marks never move. The earliest candidate that fits wins: once a conversation outgrows the
 * window, about `step` tokens of the oldest history go at once, and the next turns keep the same
 * cut (and their cached prefix) until the window fills again. Null when no candidate fits.
 */
function stableCut(history: readonly ChatMessage[], costs: readonly number[], budget: number, step: number): number | null {
  let remaining = costs.reduce((sum, value) => sum + value, 0);
  let before = 0;
  let mark = 0;
  for (let i = 0; i < history.length; i++) {
    if (history[i]?.role === "user" && before >= mark) {
      if (remaining <= budget) return i;
      mark = (Math.floor(before / step) + 1) * step;
    }
    before += costs[i] ?? 0;
    remaining -= costs[i] ?? 0;
  }
  return null;
}

/** Newest first: whole turns from the end while they fit (a cut lands on a user message). */
function tightCut(history: readonly ChatMessage[], costs: readonly number[], available: number): number {
  let budget = available;
  let start = history.length;
  let used = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    used += costs[i] ?? 0;
    if (used > budget) break;
    if (history[i]?.role === "user") {
      start = i;
      budget -= used;
      used = 0;
    }
  }
  return start;
}
