// While a long prompt is read (serve-http, the built CLI, embedded engine, a bench-shaped model
// with a 32 k context, one thread), the streams are never quiet: Responses sends
// `response.in_progress` and Messages `ping` at least every http.keepalive_s (clients with an idle
// timeout count events, not comments), and chat completions shows how far the prompt is read:
// llama-server's `prompt_progress` chunks with `return_progress`, named `prompt_progress` frames
// in events mode. Each answer still ends as its API says.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { HttpServer } from "../helpers/http-cli-server.js";
import { startLongPromptServer } from "../helpers/long-prompt-server.js";
import { LiveSse } from "../helpers/live-sse.js";
import { longPromptText } from "../helpers/long-prompt.js";
import { assertEventShape as assertMessageEvent, loadMessagesTypes } from "../helpers/messages-types.js";
import { assertEventShape as assertResponseEvent, loadResponsesTypes } from "../helpers/responses-types.js";

/** About 2,600 prompt tokens: read in a few seconds on one thread (about 1,200 tokens a second on a quiet machine). */
const PROMPT_TOKENS = 2000;
/** http.keepalive_s at its floor. */
const KEEPALIVE_S = 0.5;
/** Timers and the test's own reads on a busy machine: a gap may exceed the interval by this much. */
const MARGIN_MS = 1000;

let server: HttpServer;

before(async () => {
  server = await startLongPromptServer({ keepalive_s: KEEPALIVE_S });
});

after(async () => {
  await server?.stop();
});

type Json = Record<string, unknown>;
type Event = { event: string | null; data: Json; at: number };

async function stream(path: string, body: Json, headers: Record<string, string> = {}): Promise<Event[]> {
  const response = await fetch(`${server.base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  assert.equal(response.status, 200);
  const live = new LiveSse(response);
  await live.ended;
  return live.events();
}

/**
 * The events from the first one to the first of the answer (`isOutput`), i.e. while the prompt was
 * read: no two further apart than the keep-alive interval and the margin. Returns the largest gap
 * and how long the reading took, and checks that it took long enough to need heartbeats at all.
 */
function assertNeverQuiet(events: readonly Event[], isOutput: (event: Event) => boolean): { maxGapMs: number; readingMs: number } {
  const first = events.findIndex(isOutput);
  assert.ok(first > 0, "the answer came");
  const reading = events.slice(0, first + 1);
  let maxGapMs = 0;
  for (let i = 1; i < reading.length; i++) maxGapMs = Math.max(maxGapMs, reading[i]!.at - reading[i - 1]!.at);
  const readingMs = reading.at(-1)!.at - reading[0]!.at;
  assert.ok(readingMs > 4 * KEEPALIVE_S * 1000, `the prompt was read in ${readingMs.toFixed(0)} ms: too fast to need a heartbeat`);
  assert.ok(maxGapMs <= KEEPALIVE_S * 1000 + MARGIN_MS, `${maxGapMs.toFixed(0)} ms without an event while the prompt was read (http.keepalive_s ${KEEPALIVE_S})`);
  return { maxGapMs, readingMs };
}

const report = (line: string): boolean => process.stderr.write(`# ${line}\n`);

describe("long prompts over serve-http: heartbeats and progress while the prompt is read (built CLI, embedded engine)", () => {
  it("Responses: response.in_progress (the created response, sequence numbers in order) at least every keepalive_s; the answer ends well-formed", async () => {
    const events = await stream("/v1/responses", { model: "assistant", input: longPromptText(PROMPT_TOKENS, 11), stream: true, store: false });
    const types = loadResponsesTypes();
    for (const event of events) {
      assert.equal(event.event, event.data.type, "each SSE frame is named after its event type");
      assertResponseEvent(types, event.data);
    }
    assert.deepEqual(
      events.map((event) => event.data.sequence_number),
      events.map((_, index) => index),
      "sequence_number counts every event, heartbeats included",
    );
    const { maxGapMs, readingMs } = assertNeverQuiet(events, (event) => event.event === "response.output_item.added");
    const [created] = events;
    assert.equal(created?.event, "response.created");
    const withoutLocal = (response: unknown): Json => ({ ...(response as Json), local_ai: null });
    const heartbeats = events.slice(1, events.findIndex((event) => event.event === "response.output_item.added"));
    assert.ok(heartbeats.length >= 3, `${heartbeats.length} events while the prompt was read`);
    for (const heartbeat of heartbeats) {
      assert.equal(heartbeat.event, "response.in_progress");
      assert.deepEqual(withoutLocal(heartbeat.data.response), withoutLocal(created.data.response), "the response as in response.created");
    }
    const last = events.at(-1)!;
    // max_tokens 4 on a model that never stops: incomplete, for max_output_tokens.
    assert.equal(last.event, "response.incomplete");
    assert.deepEqual((last.data.response as Json).incomplete_details, { reason: "max_output_tokens" });
    assert.equal(((last.data.response as Json).usage as Json).output_tokens, 4);
    report(`responses: ${heartbeats.length - 1} heartbeats over ${readingMs.toFixed(0)} ms of reading; largest gap ${maxGapMs.toFixed(0)} ms`);
  });

  it("Messages: ping at least every keepalive_s; the answer ends well-formed", async () => {
    const events = await stream(
      "/v1/messages",
      { model: "assistant", max_tokens: 4, messages: [{ role: "user", content: longPromptText(PROMPT_TOKENS, 12) }], stream: true },
      { "anthropic-version": "2023-06-01" },
    );
    const types = loadMessagesTypes();
    for (const event of events) {
      assert.equal(event.event, event.data.type, "each SSE frame is named after its event type");
      assertMessageEvent(types, event.data);
    }
    const { maxGapMs, readingMs } = assertNeverQuiet(events, (event) => event.event === "content_block_start");
    const reading = events.slice(1, events.findIndex((event) => event.event === "content_block_start"));
    assert.equal(events[0]?.event, "message_start");
    assert.ok(reading.length >= 3 && reading.every((event) => event.event === "ping"), `pings while the prompt was read: ${reading.map((event) => event.event).join(", ")}`);
    assert.deepEqual(
      events.slice(reading.length + 1).map((event) => event.event).filter((name) => name !== "ping"),
      ["content_block_start", ...Array<string>(events.filter((event) => event.event === "content_block_delta").length).fill("content_block_delta"), "content_block_stop", "message_delta", "message_stop"],
    );
    const delta = events.find((event) => event.event === "message_delta")!;
    assert.equal((delta.data.delta as Json).stop_reason, "max_tokens");
    assert.equal((delta.data.usage as Json).output_tokens, 4);
    report(`messages: ${reading.length} pings over ${readingMs.toFixed(0)} ms of reading; largest gap ${maxGapMs.toFixed(0)} ms`);
  });

  it("chat completions, return_progress: prompt_progress chunks (choices []), processed monotonic, the last at total before the first content", async () => {
    const events = await stream("/v1/chat/completions", { model: "assistant", messages: [{ role: "user", content: longPromptText(PROMPT_TOKENS, 13) }], stream: true, return_progress: true, stream_options: { include_usage: true } });
    assert.ok(events.every((event) => event.event === null), "no named frames without events mode");
    const progressAt = events.flatMap((event, index) => (event.data.prompt_progress === undefined ? [] : [index]));
    assert.ok(progressAt.length >= 2, `${progressAt.length} prompt_progress chunks`);
    const usage = events.at(-1)!.data.usage as { prompt_tokens: number };
    let previous = { processed: -1, time_ms: -1 };
    for (const index of progressAt) {
      const chunk = events[index]!.data;
      assert.deepEqual(chunk.choices, [], "a progress chunk has no choices");
      assert.deepEqual(Object.keys(chunk).sort(), ["choices", "created", "id", "model", "object", "prompt_progress"]);
      assert.equal(chunk.object, "chat.completion.chunk");
      assert.equal(chunk.id, events[0]!.data.id, "the completion's id");
      const progress = chunk.prompt_progress as { total: number; cache: number; processed: number; time_ms: number };
      assert.deepEqual(Object.keys(progress).sort(), ["cache", "processed", "time_ms", "total"]);
      assert.equal(progress.total, usage.prompt_tokens, "total is the whole prompt");
      // A new conversation: only the chat template's opening, shared with the request before, is cached.
      assert.equal(progress.cache, (events[progressAt[0]!]!.data.prompt_progress as { cache: number }).cache, "the same cache figure throughout");
      assert.ok(progress.cache < 100, `${progress.cache} tokens cached of a new conversation`);
      assert.ok(progress.processed >= previous.processed && progress.time_ms >= previous.time_ms, "processed and time_ms never decrease");
      previous = progress;
    }
    const firstContent = events.findIndex((event) => typeof ((event.data.choices as Json[] | undefined)?.[0]?.delta as Json | undefined)?.content === "string" && (((event.data.choices as Json[])[0]!.delta as Json).content as string) !== "");
    const last = progressAt.at(-1)!;
    assert.ok(last < firstContent, "progress comes before the answer's text");
    assert.equal((events[last]!.data.prompt_progress as { processed: number }).processed, usage.prompt_tokens, "the last progress says the prompt is read");
    assert.ok(progressAt.every((index) => index < firstContent));
    report(`chat return_progress: ${progressAt.length} chunks, ${usage.prompt_tokens} prompt tokens, read in ${(previous.time_ms / 1000).toFixed(1)} s`);
  });

  it("chat completions, events mode (x-local-ai-events: 1) without return_progress: named prompt_progress frames, no progress chunks", async () => {
    const events = await stream("/v1/chat/completions", { model: "assistant", messages: [{ role: "user", content: longPromptText(PROMPT_TOKENS, 14) }], stream: true }, { "x-local-ai-events": "1" });
    assert.ok(!events.some((event) => event.event === null && event.data.prompt_progress !== undefined), "no prompt_progress chunk without return_progress");
    assert.ok(!events.some((event) => event.event === null && Array.isArray(event.data.choices) && event.data.choices.length === 0), "no chunk without choices");
    const progress = events.filter((event) => event.event === "prompt_progress").map((event) => event.data as { step: number; processed: number; total: number; cached: number });
    assert.ok(progress.length >= 2, `${progress.length} prompt_progress frames`);
    const usage = events.find((event) => event.event === "usage")!.data as { input_tokens: number };
    for (const [index, frame] of progress.entries()) {
      assert.deepEqual(Object.keys(frame).sort(), ["cached", "processed", "step", "total"]);
      assert.equal(frame.step, 0);
      assert.equal(frame.total, usage.input_tokens);
      if (index > 0) assert.ok(frame.processed >= progress[index - 1]!.processed);
    }
    assert.equal(progress.at(-1)!.processed, usage.input_tokens);
    const names = events.map((event) => event.event);
    assert.ok(names.lastIndexOf("prompt_progress") < names.indexOf("llm_chunk"), "progress comes before the answer's text");
    assert.equal(names.at(-1), "result");
  });
});
