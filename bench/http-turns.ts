import { readFileSync } from "node:fs";
import { request as httpRequest, type Agent } from "node:http";
import { performance } from "node:perf_hooks";
import type { ChatMessage } from "../src/shared/conversation/chat-message.js";
import type { GenerateRequest } from "../src/engine/chat-types.js";
import type { EmbeddedEngine } from "../src/engine/embedded/embedded-engine.js";

/** What bench:http measures of one streamed turn, on either side (serve-http or the engine in process). */
export interface TurnSample {
  /** On-CPU ms per output token of the main thread that ran the engine's JS (the server's; this process's for direct). */
  engine_js_cpu_per_token_ms: number;
  ttft_ms: number;
  stream_tps: number;
  e2e_tps: number;
  output_tokens: number;
  input_tokens: number;
  chunks: number;
  total_ms: number;
}

/** One streamed turn's figures from its times (performance.now() ms: request sent, first and last text, end) and usage. */
export function turnSample(t: { cpuMs: number; sent: number; first: number; last: number; done: number; outputTokens: number; inputTokens: number; chunks: number }): TurnSample {
  return {
    engine_js_cpu_per_token_ms: t.cpuMs / t.outputTokens,
    ttft_ms: t.first - t.sent,
    stream_tps: ((t.outputTokens - 1) * 1000) / (t.last - t.first),
    e2e_tps: (t.outputTokens * 1000) / (t.done - t.sent),
    output_tokens: t.outputTokens,
    input_tokens: t.inputTokens,
    chunks: t.chunks,
    total_ms: t.done - t.sent,
  };
}

/** Nanoseconds a process's main thread has been on a CPU (Linux schedstat), NaN elsewhere. */
export function mainThreadCpuNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return Number.NaN;
  }
}

export interface HttpResult {
  status: number;
  body: string;
}

/** One request over a keep-alive agent; `onData` sees every body piece with its arrival time. */
export function send(agent: Agent, port: number, method: string, path: string, body: unknown, onData?: (text: string, at: number) => void): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, agent, headers: payload === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } },
      (res) => {
        res.setEncoding("utf8");
        let text = "";
        res.on("data", (piece: string) => {
          text += piece;
          onData?.(piece, performance.now());
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The messages serve-http gives the engine for an agent with this system prompt and one user input. */
export function generateRequest(systemPrompt: string, input: string, maxTokens: number): GenerateRequest {
  const messages: ChatMessage[] = [
    { role: "system", content: systemPrompt },
    { role: "user", content: input },
  ];
  return { messages, temperature: 0, maxTokens, seed: null };
}

/** The same turn on an engine in this process: `generate()` called -> first text chunk, and so on. */
export async function directTurn(engine: EmbeddedEngine, request: GenerateRequest): Promise<TurnSample> {
  let first = 0;
  let last = 0;
  let chunks = 0;
  let outputTokens = Number.NaN;
  let inputTokens = Number.NaN;
  const cpu = mainThreadCpuNs(process.pid);
  const sent = performance.now();
  for await (const chunk of engine.generate(request)) {
    if (chunk.type === "text") {
      const at = performance.now();
      if (chunks === 0) first = at;
      last = at;
      chunks++;
    } else if (chunk.type === "usage") {
      outputTokens = chunk.outputTokens;
      inputTokens = chunk.inputTokens;
    }
  }
  const done = performance.now();
  const cpuMs = (mainThreadCpuNs(process.pid) - cpu) / 1e6;
  return turnSample({ cpuMs, sent, first, last, done, outputTokens, inputTokens, chunks });
}
