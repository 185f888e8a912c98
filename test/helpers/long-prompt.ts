import { BENCH_SHAPES, Mulberry32, type BenchShape } from "../fixtures/gguf/index.js";

/** The bench `small` shape with a 32 k trained context: prompts of many thousand tokens fit, each read in seconds. */
export const LONG_PROMPT_SHAPE: BenchShape = { ...BENCH_SHAPES.small, contextLength: 32768 };

/**
 * Seeded lowercase words of about `tokens` tokens on the bench vocabulary (chars, then 2- to
 * 4-grams: about 3 characters a token), so that a test can pick a prompt's size.
 */
export function longPromptText(tokens: number, seed: number): string {
  const random = new Mulberry32(seed);
  const words: string[] = [];
  let chars = 0;
  while (chars < tokens * 3) {
    const length = 2 + Math.floor(random.next() * 7);
    let word = "";
    for (let i = 0; i < length; i++) word += String.fromCharCode(97 + Math.floor(random.next() * 26));
    words.push(word);
    chars += length + 1;
  }
  return words.join(" ");
}
