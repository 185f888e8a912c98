import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryNotesFor } from "../../src/agent/memory-notes.js";
import type { AgentConfig } from "../../src/config/schema.js";
import type { Engine } from "../../src/engine/engine.js";
import type { MemoryIndex, MemorySnippet } from "../../src/store/store-types.js";

const agent = (extra: Partial<AgentConfig> = {}): AgentConfig => ({ model: "default", system_prompt: "s", tools: [], temperature: 0, seed: null, max_tokens: 10, memory: true, memory_tokens: 256, ...extra });

/** A memory index that answers with fixed snippets, honouring the exclusion it is given. */
function indexOf(snippets: MemorySnippet[]): { index: MemoryIndex; budgets: number[] } {
  const budgets: number[] = [];
  const index: MemoryIndex = {
    ensureUser: async () => undefined,
    addTurn: () => undefined,
    search: (_user, _query, budget, exclude) => {
      budgets.push(budget);
      return snippets.filter((s) => exclude?.(s.source) !== true);
    },
  };
  return { index, budgets };
}

/** Only countTokens is used: one token per word. */
const wordEngine = { countTokens: async (text: string) => text.split(/\s+/).filter(Boolean).length } as unknown as Engine;
const noTokenizer = {} as Engine;

const base = { userId: "u", sessionId: "s1", query: "cats", history: [], signal: new AbortController().signal };
const snippets: MemorySnippet[] = [
  { text: "Tom is a cat", source: "session:s0@1", score: 3 },
  { text: "the answer in this very session", source: "session:s1@2", score: 2 },
  { text: "cats like milk and sleep all day long", source: "note:cats.md#1", score: 1 },
];

describe("memory notes for a turn", () => {
  it("never the current session's own turns, nor notes an earlier turn was given", async () => {
    const { index } = indexOf(snippets);
    const notes = await memoryNotesFor({ ...base, memory: index, engine: noTokenizer, agent: agent() });
    assert.equal(notes.snippets, 2);
    assert.doesNotMatch(notes.preamble ?? "", /this very session/);
    const again = await memoryNotesFor({ ...base, memory: index, engine: noTokenizer, agent: agent(), history: [{ role: "user", content: "q", preamble: notes.preamble ?? "" }] });
    assert.equal(again.snippets, 0, "both were given before: the window holds them");
  });

  it("stays within memory_tokens counted by the model's tokenizer; off with memory false or a zero budget", async () => {
    const { index, budgets } = indexOf(snippets);
    const tight = await memoryNotesFor({ ...base, memory: index, engine: wordEngine, agent: agent({ memory_tokens: 14 }) });
    assert.equal(tight.snippets, 1, "the second snippet would pass 14 words");
    assert.ok((tight.preamble ?? "").split(/\s+/).length <= 14);
    assert.deepEqual(budgets, [14]);
    assert.deepEqual(await memoryNotesFor({ ...base, memory: index, engine: wordEngine, agent: agent({ memory: false }) }), { preamble: undefined, snippets: 0 });
    assert.deepEqual(await memoryNotesFor({ ...base, memory: index, engine: wordEngine, agent: agent({ memory_tokens: 0 }) }), { preamble: undefined, snippets: 0 });
  });
});
