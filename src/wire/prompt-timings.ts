import type { TurnUsage } from "../agent/turn-outcome.js";

/**
 * What reading the turn's prompts cost, in llama-server's `timings` names: `prompt_n` tokens read
 * (not cached), `cache_n` reused from the KV cache, `prompt_ms`, `prompt_per_second` (of the tokens
 * read; null when none were). Every HTTP dialect's `local_ai.timings`.
 */
export interface PromptTimings {
  prompt_n: number;
  cache_n: number;
  prompt_ms: number;
  prompt_per_second: number | null;
}

/** The timings of a turn, or undefined where no engine reported its prompt time (an openai upstream). */
export function promptTimings(usage: TurnUsage): PromptTimings | undefined {
  if (usage.prompt_ms === null) return undefined;
  const cached = usage.cached_input_tokens ?? 0;
  const read = Math.max(0, usage.input_tokens - cached);
  const perSecond = read > 0 && usage.prompt_ms > 0 ? Math.round((read * 10_000) / usage.prompt_ms) / 10 : null;
  return { prompt_n: read, cache_n: cached, prompt_ms: usage.prompt_ms, prompt_per_second: perSecond };
}

/** `{timings}` to spread into a `local_ai` object, or nothing. */
export function timingsField(usage: TurnUsage): { timings?: PromptTimings } {
  const timings = promptTimings(usage);
  return timings === undefined ? {} : { timings };
}
