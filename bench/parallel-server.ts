// The llama-server side of bench/parallel.bench.ts: one server with N slots (its own C++
// batching, no JS in the loop), one completion alone against N at once, same model and tokens.
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { freePort } from "../test/helpers/free-port.js";

export interface ServerParallel {
  threads: number;
  singleTokPerS: number;
  batchedTokPerS: number;
}


export async function serverParallel(options: { binary: string; modelPath: string; parallel: number; threads: number; maxTokens: number; round: number }): Promise<ServerParallel> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = ["-m", options.modelPath, "--host", "127.0.0.1", "--port", String(port), "-c", String(1024 * options.parallel), "-ngl", "0", "--parallel", String(options.parallel), "-t", String(options.threads), "--no-webui"];
  const child = spawn(options.binary, args, { stdio: ["ignore", "ignore", "ignore"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const started = performance.now();
    while (!(await fetch(`${origin}/health`).then((r) => r.ok, () => false))) {
      if (child.exitCode !== null || performance.now() - started > 60_000) throw new Error(`llama-server did not start (exit ${child.exitCode})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // llama-server parses what a model generates even on /completion, and some of a random-weight
    // model's outputs fail its parser (HTTP 500). Greedy output is fixed per prompt, so the
    // warm-up finds a prompt whose output parses, and every request uses it.
    const prompt = (seed: number): number[] => [1, ...Array.from({ length: 24 }, (_, i) => 300 + ((seed * 7919 + i * 131) % 20000))];
    const complete = async (tokens: number[]): Promise<number | null> => {
      const response = await fetch(`${origin}/completion`, {
        // A collapse (spinning threads on a busy machine) fails the round instead of hanging it.
        signal: AbortSignal.timeout(120_000),
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: tokens, n_predict: options.maxTokens, ignore_eos: true, cache_prompt: false, temperature: 0 }),
      });
      const body = (await response.json()) as { tokens_predicted?: number };
      return response.ok && body.tokens_predicted !== undefined ? body.tokens_predicted : null;
    };
    let chosen: number[] | null = null;
    for (let seed = 0; seed < 20 && chosen === null; seed++) if ((await complete(prompt(seed))) !== null) chosen = prompt(seed);
    if (chosen === null) throw new Error("llama-server: no prompt of 20 gave an output its parser accepts");
    const tokens = chosen;
    const measure = async (n: number): Promise<number> => {
      const begun = performance.now();
      const counts = await Promise.all(Array.from({ length: n }, () => complete(tokens)));
      if (counts.some((count) => count === null)) throw new Error("llama-server: a completion failed during the measurement");
      return counts.reduce<number>((a, b) => a + (b ?? 0), 0) / ((performance.now() - begun) / 1000);
    };
    let single: number;
    let batched: number;
    if (options.round % 2 === 0) {
      single = await measure(1);
      batched = await measure(options.parallel);
    } else {
      batched = await measure(options.parallel);
      single = await measure(1);
    }
    return { threads: options.threads, singleTokPerS: single, batchedTokPerS: batched };
  } finally {
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(killer);
  }
}
