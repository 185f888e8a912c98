import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getLlama, LlamaLogLevel, type LlamaModel, type Token } from "node-llama-cpp";
import { tokenizeWith } from "../../src/engine/llama/model-tokenizer.js";
import { countTokensSliced, SLICE_CHARS, tokenizeSliced } from "../../src/engine/llama/sliced-tokenize.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

/**
 * Tokenizing in slices (issue 33) gives the tokens of one whole call, on the test models'
 * SentencePiece vocabularies (tiny; demo, whose tokens span spaces such as "▁a▁") and the
 * reranker's GPT-style BPE, for texts many slices long: words, special-token text, runs without
 * whitespace, surrogate pairs. Pieces read after a bounded window equal those read after
 * the whole prefix.
 */

const WORDS = ["the", "cat", "ran", "to", "river,", "slowly.", "Hello!", "I", "am", "a", "tiny", "demo", "model", "llama.cpp.", "<|im_start|>user", "<|im_end|>", "<s>", "\n", "  ", "über", "日本語", "🙂", "x".repeat(40)];

function randomText(length: number, seed: number): string {
  let state = seed;
  const next = (): number => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  let text = "";
  while (text.length < length) text += (WORDS[Math.floor(next() * WORDS.length)] as string) + (next() < 0.9 ? " " : "");
  return text;
}

const TEXTS: Record<string, string> = {
  words: randomText(2.5 * SLICE_CHARS, 7),
  sentence: "The cat ran to the river, slowly. ".repeat(Math.ceil((2.5 * SLICE_CHARS) / 34)),
  // Cut anywhere, never inside a surrogate pair (byte-fallback tokens are slow to make: kept short).
  "no whitespace": "abcdefgh".repeat((1.2 * SLICE_CHARS) / 8),
  "surrogate pairs": "ab🙂cd".repeat((1.2 * SLICE_CHARS) / 6),
};

const models: Record<string, LlamaModel> = {};

before(async () => {
  const llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.warn });
  for (const name of ["tiny", "demo", "rerank"] as const) models[name] = await llama.loadModel({ modelPath: await ensureFixture(name), gpuLayers: 0 });
});

after(async () => {
  for (const model of Object.values(models)) await model.dispose();
});

describe("tokenizeSliced", () => {
  it("gives one whole call's tokens, with and without special-token text and trimLeadingSpace", async () => {
    for (const [name, model] of Object.entries(models)) {
      for (const [label, text] of Object.entries(TEXTS)) {
        // Every flag on the mixed text; the others as POST /tokenize (special) and counting (trim) take them.
        const variants = label === "words" ? [[true, false], [true, true], [false, false], [false, true]] : [[true, false], [false, true]];
        for (const [specialTokens = true, trimLeadingSpace = false] of variants) {
          {
            const whole = model.tokenize(text, specialTokens, trimLeadingSpace ? "trimLeadingSpace" : undefined);
            const sliced = await tokenizeSliced(model, text, { specialTokens, trimLeadingSpace });
            assert.deepEqual(sliced, whole, `${name} ${label} special=${specialTokens} trim=${trimLeadingSpace}`);
            if (label === "words") assert.equal(await countTokensSliced(model, text, { specialTokens, trimLeadingSpace }), whole.length);
          }
        }
      }
    }
  });

  it("stops once past maxTokens with the caller's error, and on abort", async () => {
    const model = models.tiny as LlamaModel;
    const text = TEXTS.sentence as string;
    await assert.rejects(tokenizeSliced(model, text, { specialTokens: true, maxTokens: 100, overLimit: (count) => new Error(`over at ${count}`) }), /over at \d+/);
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(tokenizeSliced(model, text, { specialTokens: true, signal: controller.signal }), (error: unknown) => (error as { code?: string }).code === "cancelled");
  });
});

describe("tokenizeWith pieces", () => {
  it("equal the pieces read after the whole prefix, and joined are the text", async () => {
    for (const [name, model] of Object.entries(models)) {
      const content = randomText(3000, 11);
      const { tokens, pieces } = await tokenizeWith(model, { content, withPieces: true });
      const full = tokens.map((token, index) => model.detokenize([token as Token], true, tokens.slice(0, index) as Token[]));
      assert.deepEqual(pieces, full, name);
    }
    const tiny = models.tiny as LlamaModel;
    const content = "ab ".repeat(SLICE_CHARS);
    const { pieces } = await tokenizeWith(tiny, { content, withPieces: true });
    assert.equal(pieces?.join(""), content);
  });
});
