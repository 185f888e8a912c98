// A client that goes away while its long prompt is read (serve-http, the built CLI, embedded
// engine, a bench-shaped model with a 32 k context, one thread), on each dialect's stream: the
// turn stops within a chunk of the reading, the process idles right after, and the retry of the
// same conversation reports what was read before the cut as cached. No real client (Codex CLI,
// Claude Code) is started here, only fetch on loopback; those run only inside `unshare --net`
// (codex-long-prompt.test.ts, through test/helpers/client-process.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { HttpServer } from "../helpers/http-cli-server.js";
import { startLongPromptServer } from "../helpers/long-prompt-server.js";
import { LiveSse } from "../helpers/live-sse.js";
import { longPromptText, promptReadLines } from "../helpers/long-prompt.js";
import { readCpuSeconds } from "../helpers/proc-stats.js";
import { waitUntil } from "../helpers/wait-until.js";

/** About 2,600 prompt tokens: read in a few seconds on one thread (about 1,200 tokens a second on a quiet machine). */
const PROMPT_TOKENS = 2000;
const READ_TIMEOUT_MS = 240_000;

let server: HttpServer;

before(async () => {
  // Debug: the "reading the prompt" lines tell how far a Responses or Messages request got.
  server = await startLongPromptServer({}, { LOCAL_AI_LOG_LEVEL: "debug" });
});

after(async () => {
  await server?.stop();
});

type Json = Record<string, unknown>;

interface Dialect {
  path: string;
  headers: Record<string, string>;
  body: (prompt: string) => Json;
  /** Resolves once the server is mid-prompt, with how many tokens it had read by then. */
  midPrompt: (live: LiveSse, requestId: string) => Promise<number>;
  /** The completed stream's cached prompt tokens, after checking that it completed. */
  cached: (events: Array<{ event: string | null; data: Json }>) => number;
}

/** Mid-prompt from the server's log: a "reading the prompt" line of this request with 0 < processed < total. */
async function midPromptFromLog(requestId: string): Promise<number> {
  const midway = (): number | undefined => promptReadLines(server.proc.stderr, requestId).find((line) => line.processed > 0 && line.processed < line.total)?.processed;
  await waitUntil(() => midway() !== undefined, [{ emitter: server.proc.child.stderr, event: "data" }], READ_TIMEOUT_MS, () => server.proc.stderr.slice(-2000));
  return Math.max(...promptReadLines(server.proc.stderr, requestId).map((line) => line.processed));
}

const DIALECTS: Record<string, Dialect> = {
  "chat completions": {
    path: "/v1/chat/completions",
    headers: {},
    body: (prompt) => ({ model: "assistant", messages: [{ role: "user", content: prompt }], stream: true, return_progress: true, stream_options: { include_usage: true } }),
    midPrompt: async (live) => {
      const progress = (frame: { data: string; comment: boolean }): { processed: number; total: number } | undefined =>
        frame.comment || frame.data === "[DONE]" ? undefined : (JSON.parse(frame.data) as { prompt_progress?: { processed: number; total: number } }).prompt_progress;
      await live.waitFor((frame) => {
        const seen = progress(frame);
        return seen !== undefined && seen.processed > 0 && seen.processed < seen.total;
      }, READ_TIMEOUT_MS);
      return Math.max(...live.frames.map((frame) => progress(frame)?.processed ?? 0));
    },
    cached: (events) => {
      assert.equal(events.find((e) => (e.data.choices as Json[] | undefined)?.[0]?.finish_reason != null) !== undefined, true, "a finish_reason");
      const usage = events.at(-1)?.data.usage as { prompt_tokens_details?: { cached_tokens: number } } | undefined;
      assert.ok(usage?.prompt_tokens_details !== undefined, `no usage chunk: ${JSON.stringify(events.at(-1))}`);
      return usage.prompt_tokens_details.cached_tokens;
    },
  },
  responses: {
    path: "/v1/responses",
    headers: {},
    // prompt_cache_key: the conversation's KV state (what Codex sends).
    body: (prompt) => ({ model: "assistant", input: prompt, stream: true, store: false, prompt_cache_key: "long-prompt-cancel" }),
    midPrompt: (_live, requestId) => midPromptFromLog(requestId),
    cached: (events) => {
      // max_tokens 4 on a model that never stops: the answer ends incomplete (max_output_tokens).
      const completed = events.at(-1);
      assert.ok(completed?.event === "response.completed" || completed?.event === "response.incomplete", JSON.stringify(completed));
      return ((completed.data.response as Json).usage as { input_tokens_details: { cached_tokens: number } }).input_tokens_details.cached_tokens;
    },
  },
  messages: {
    path: "/v1/messages",
    // Claude Code's session header: the conversation's KV state.
    headers: { "anthropic-version": "2023-06-01", "x-claude-code-session-id": "long-prompt-cancel" },
    body: (prompt) => ({ model: "assistant", max_tokens: 4, messages: [{ role: "user", content: prompt }], stream: true }),
    midPrompt: (_live, requestId) => midPromptFromLog(requestId),
    cached: (events) => {
      assert.equal(events.at(-1)?.event, "message_stop", JSON.stringify(events.at(-1)));
      const delta = events.find((e) => e.event === "message_delta");
      return (delta?.data.usage as { cache_read_input_tokens: number }).cache_read_input_tokens;
    },
  },
};

function post(dialect: Dialect, prompt: string, requestId: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${server.base}${dialect.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": requestId, ...dialect.headers },
    body: JSON.stringify(dialect.body(prompt)),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** The server's "cancelled work stopped" line of this request (src/http/request/request-work.ts). */
async function workStopped(requestId: string): Promise<{ stopped_ms: number; reason: string }> {
  const find = (): { stopped_ms: number; reason: string } | undefined =>
    server.proc.stderr
      .split("\n")
      .filter((line) => line.includes('"cancelled work stopped"'))
      .map((line) => JSON.parse(line) as { request_id: string; stopped_ms: number; reason: string })
      .find((entry) => entry.request_id === requestId);
  await waitUntil(() => find() !== undefined, [{ emitter: server.proc.child.stderr, event: "data" }], 30_000, () => server.proc.stderr.slice(-2000));
  return find()!;
}

describe("long prompts over serve-http: a client that leaves mid-prompt (built CLI, embedded engine)", () => {
  for (const [name, dialect] of Object.entries(DIALECTS)) {
    it(`${name}: the turn stops within a chunk, the process idles, the retry reuses what was read`, async () => {
      const prompt = longPromptText(PROMPT_TOKENS, name.length);
      const requestId = `cut-${dialect.path.replaceAll("/", "")}`;
      const client = new AbortController();
      const sent = performance.now();
      const response = await post(dialect, prompt, requestId, client.signal);
      assert.equal(response.status, 200);
      const live = new LiveSse(response);
      const readBefore = await dialect.midPrompt(live, requestId);
      const midAt = performance.now();
      const pid = server.proc.child.pid!;
      const cpuAtAbort = readCpuSeconds(pid);
      client.abort();
      const stopped = await workStopped(requestId);
      assert.ok(stopped.stopped_ms < 1000, `the turn stopped ${stopped.stopped_ms} ms after the client left`);
      // Nothing goes on for the prompt that nobody waits for: CPU over the next 3 s.
      const cpuBefore = readCpuSeconds(pid);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const cpuAfter = readCpuSeconds(pid);
      const cpu = cpuAfter - cpuBefore;
      assert.ok(cpu < 0.3, `serve-http used ${cpu.toFixed(2)} s of CPU in the 3 s after the turn stopped`);

      const retryStarted = performance.now();
      const retry = await post(dialect, prompt, `${requestId}-retry`);
      assert.equal(retry.status, 200);
      const again = new LiveSse(retry);
      await again.ended;
      const cached = dialect.cached(again.events());
      process.stderr.write(
        `# ${name}: mid-prompt ${(midAt - sent).toFixed(0)} ms after sending (${readBefore} of the prompt read); stopped ${stopped.stopped_ms} ms after the client left; CPU ${cpu.toFixed(2)} s in the 3 s after (${(cpuAfter - cpuAtAbort).toFixed(2)} s from the abort on); retry: ${cached} cached, answered in ${(performance.now() - retryStarted).toFixed(0)} ms\n`,
      );
      assert.ok(cached >= readBefore, `the retry reused ${cached} tokens; ${readBefore} had been read before the client left`);
    });
  }
});
