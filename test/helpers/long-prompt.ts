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

/** A server's debug line "reading the prompt" (src/http/request/request-record.ts): how far a request's prompt was read. */
export interface PromptReadLine {
  processed: number;
  total: number;
  cached: number;
}

/** The "reading the prompt" lines of one request (its X-Request-Id) in a server's JSON log (LOCAL_AI_LOG_LEVEL=debug), in order. */
export function promptReadLines(stderr: string, requestId: string): PromptReadLine[] {
  const lines: PromptReadLine[] = [];
  for (const line of stderr.split("\n")) {
    if (!line.includes('"reading the prompt"')) continue;
    const entry = JSON.parse(line) as PromptReadLine & { request_id?: string };
    if (entry.request_id === requestId) lines.push({ processed: entry.processed, total: entry.total, cached: entry.cached });
  }
  return lines;
}
