import type { AgentConfig } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { Engine } from "../engine/engine.js";
import type { MemoryIndex } from "../store/store-types.js";
import { memoryPreamble } from "./prompt.js";

/** What memory may look up for a turn of one session. */
export interface MemoryLookup {
  memory: MemoryIndex;
  engine: Engine;
  agent: AgentConfig;
  userId: string;
  sessionId: string;
  query: string;
  history: readonly ChatMessage[];
  signal: AbortSignal;
}

/**
 * Memory notes for this turn, or undefined. Off for an agent with `memory: false`. Never repeats
 * what the context window holds (this session's own turns, notes an earlier turn was given).
 * The notes stay within `memory_tokens` counted by the model's own tokenizer where the engine has
 * one (the last snippets are dropped until they fit).
 */
export async function memoryNotesFor(lookup: MemoryLookup): Promise<{ preamble: string | undefined; snippets: number }> {
  const { agent } = lookup;
  if (!agent.memory || agent.memory_tokens === 0) return { preamble: undefined, snippets: 0 };
  const ownTurns = `session:${lookup.sessionId}@`;
  const given = lookup.history.flatMap((m) => (m.role === "user" && m.preamble !== undefined ? [m.preamble] : []));
  const snippets = lookup.memory
    // The index cuts by an estimate (about four characters a token); the tokenizer has the last word.
    .search(lookup.userId, lookup.query, agent.memory_tokens, (source) => source.startsWith(ownTurns))
    .filter((snippet) => !given.some((notes) => notes.includes(snippet.text.replace(/\s+/g, " ").trim())));
  const { engine } = lookup;
  if (engine.countTokens !== undefined) {
    while (snippets.length > 0 && (await engine.countTokens(memoryPreamble(snippets) ?? "", lookup.signal)) > agent.memory_tokens) snippets.pop();
  }
  return { preamble: memoryPreamble(snippets), snippets: snippets.length };
}
