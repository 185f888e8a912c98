import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { median } from "./bench-results.js";

/** Per turn: the median ms to evaluate that turn's new tokens (and sample one) on top of the earlier turns, held in the KV cache. */
export interface KvFloor {
  turns: Array<{ turn: number; cachedTokens: number; newTokens: number; ms: number }>;
}

/**
 * The floor under bench:kv's "TTFT turn N / turn 1": node-llama-cpp alone, in this process, on
 * one sequence, evaluating each turn's new tokens after the earlier turns' tokens already sit in
 * the KV cache (what perfect reuse costs), then sampling one token. No local-ai code, no pipe,
 * no chat template: if this ratio is already above 1x, the rest is the model attending over a
 * longer context, which no cache can remove. `texts[t]` is turn t's new text (the same filler the
 * sessions send).
 */
export async function measureKvFloor(modelPath: string, texts: readonly string[], options: { ctx: number; threads: number; rounds: number }): Promise<KvFloor> {
  const runtime = new LlamaRuntime(pino({ level: "silent" }));
  const { llama } = await runtime.get();
  const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
  const context = await model.createContext({ contextSize: options.ctx, sequences: 1, threads: options.threads });
  const perTurn = texts.map(() => [] as number[]);
  const counts = texts.map((text) => model.tokenize(text).length);
  try {
    for (let round = 0; round < options.rounds; round++) {
      const sequence = context.getSequence();
      try {
        for (const [index, text] of texts.entries()) {
          const tokens = model.tokenize(text);
          const started = performance.now();
          // Evaluating the new tokens and drawing the first one: what a turn waits for before its first token.
          const generator = sequence.evaluate(tokens, { temperature: 0 });
          const first = await generator.next();
          perTurn[index]?.push(performance.now() - started);
          // The drawn token stays out of the cache, as a turn's reply is not part of the next prompt's tokens here.
          await generator.return(undefined);
          if (first.done === true) throw new Error("the model produced no token");
        }
      } finally {
        await sequence.dispose();
      }
    }
  } finally {
    await context.dispose();
    await model.dispose();
    await runtime.dispose();
  }
  let cached = 0;
  return {
    turns: perTurn.map((samples, index) => {
      const row = { turn: index + 1, cachedTokens: cached, newTokens: counts[index] ?? 0, ms: median(samples) };
      cached += counts[index] ?? 0;
      return row;
    }),
  };
}
