import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { EmitEvent } from "../../src/agent/events.js";
import type { TurnRequest } from "../../src/agent/turn-request.js";
import { splitConversation, type StatelessTurnRequest } from "../../src/agent/stateless-turn.js";
import type { SessionTurnOutcome, TurnOutcome } from "../../src/agent/turn-outcome.js";
import { createHttpApp } from "../../src/http/app.js";
import type { RuntimeHealth } from "../../src/diagnostics/runtime-health.js";
import type { HttpDeps, TurnRunner } from "../../src/http/http-deps.js";
import { parseCompletionsRequest } from "../../src/http/openai/completions-schema.js";
import { parseEmbeddingsRequest } from "../../src/http/openai/embeddings-schema.js";
import { toOpenAiError } from "../../src/http/http-error.js";
import { assertSupported, ignoredFieldWarnings, toClientTools, toConversation, toOverrides, userIdFor } from "../../src/http/openai/request-mapping.js";
import { lastUserInput, parseChatRequest } from "../../src/http/openai/request-schema.js";
import { isSafeId } from "../../src/shared/safe-id.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { fuzzParams } from "../helpers/fuzz-runs.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Ids and strings a hostile client sends: traversal, NUL, control characters, lone surrogates, huge.
const hostileString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom("", ".", "..", "../../etc/passwd", "a/b", "a\\b", ".ssh", "x\u0000y", "\ud800", "CON", "a".repeat(65), "a".repeat(5000), "%2e%2e%2f", "héllo", "user@example.com"),
);
const anyValue: fc.Arbitrary<Json> = fc.oneof(hostileString, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>);
const content: fc.Arbitrary<Json> = fc.oneof(
  hostileString,
  fc.constant(null),
  fc.array(
    fc.oneof(
      fc.record({ type: fc.constant("text"), text: fc.oneof(hostileString, anyValue) }),
      fc.record({ type: fc.constant("image_url"), image_url: fc.oneof(fc.record({ url: hostileString }), anyValue) }),
      anyValue,
    ),
    { maxLength: 3 },
  ),
);
const toolCall: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ id: hostileString, type: fc.constant("function"), function: fc.record({ name: hostileString, arguments: fc.oneof(hostileString, anyValue) }, { requiredKeys: [] }) }, { requiredKeys: [] }),
  anyValue,
);
const message: fc.Arbitrary<Json> = fc.oneof(
  fc.record(
    {
      role: fc.oneof(fc.constantFrom("system", "developer", "user", "assistant", "tool"), hostileString),
      content,
      tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 2 }), anyValue),
      tool_call_id: hostileString,
      name: hostileString,
    },
    { requiredKeys: ["role"] },
  ),
  anyValue,
);
const tool: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ type: fc.constant("function"), function: fc.record({ name: hostileString, description: anyValue, parameters: anyValue, strict: anyValue }, { requiredKeys: ["name"] }) }),
  anyValue,
);
/** A chat body: each known field present or not, well typed or not, plus unknown fields. */
const chatBody: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.record(
    {
      model: fc.oneof(fc.constantFrom("assistant", "other", "missing"), anyValue),
      messages: fc.oneof({ weight: 4, arbitrary: fc.array(message, { maxLength: 5 }) }, anyValue),
      stream: fc.oneof(fc.boolean(), anyValue),
      user: fc.oneof(hostileString, anyValue),
      session_id: fc.oneof(hostileString, anyValue),
      resume: fc.oneof(fc.boolean(), anyValue),
      temperature: anyValue,
      top_p: anyValue,
      max_tokens: anyValue,
      max_completion_tokens: anyValue,
      stop: fc.oneof(fc.array(hostileString, { maxLength: 20 }), anyValue),
      seed: anyValue,
      response_format: fc.oneof(fc.record({ type: fc.constantFrom("text", "json_object", "json_schema"), json_schema: anyValue }), anyValue),
      tools: fc.oneof(fc.array(tool, { maxLength: 3 }), anyValue),
      tool_choice: fc.oneof(fc.constantFrom("auto", "none", "required"), fc.record({ type: fc.constant("function"), function: fc.record({ name: hostileString }) }), anyValue),
      n: anyValue,
      logprobs: anyValue,
      top_logprobs: anyValue,
      __proto__: anyValue,
      constructor: anyValue,
      unknown_field: anyValue,
    },
    { requiredKeys: [] },
  ) },
  { weight: 1, arbitrary: anyValue },
);

/** A body a real client sends, with the ids (and only the ids) fuzzed, so turns do run. */
const safeId = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,20}$/);
const plausibleChat: fc.Arbitrary<unknown> = fc.record(
  {
    model: fc.constantFrom("assistant", "other"),
    messages: fc.constant([{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }]),
    user: fc.oneof(safeId, hostileString),
    session_id: fc.oneof(safeId, hostileString),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    max_tokens: fc.integer({ min: 1, max: 4096 }),
    stop: fc.array(fc.string({ maxLength: 5 }), { maxLength: 4 }),
  },
  { requiredKeys: ["messages"] },
);
const anyChatBody: fc.Arbitrary<unknown> = fc.oneof(chatBody, plausibleChat);

/** The mapping the chat route applies, in its order, for both modes. */
function mapChat(raw: unknown): void {
  const body = parseChatRequest(raw);
  assertSupported(body);
  ignoredFieldWarnings(raw);
  toOverrides(body);
  const clientTools = toClientTools(body);
  if (body.session_id === undefined) {
    splitConversation("Agent.", toConversation(body.messages));
  } else {
    void clientTools;
    const user = userIdFor(body.user);
    assert.ok(isSafeId(user), `user id ${user}`);
    lastUserInput(body);
  }
}

/** Anything thrown must map to a 4xx with a message, a type and a code: never a 500, never a crash. */
function expectMappedOr4xx(run: () => void): void {
  try {
    run();
  } catch (error) {
    const mapped = toOpenAiError(error);
    assert.ok(mapped.status >= 400 && mapped.status < 500, `status ${mapped.status} for ${String(error)}`);
    assert.ok(mapped.body.error.message.length > 0);
    assert.notEqual(mapped.body.error.code, "internal_error");
  }
}

const OK_OUTCOME: TurnOutcome = {
  finish_reason: "stop", response: "ok", reasoning: "", trace_id: "t", warnings: [], session_id: null,
  usage: { input_tokens: 0, cached_input_tokens: null, output_tokens: 0, reasoning_tokens: null, prompt_ms: null },
};

class EchoRunner implements TurnRunner {
  readonly ids: Array<{ user: string; session: string }> = [];
  runTurn(request: TurnRequest, _options: { signal: AbortSignal; emit: EmitEvent }): Promise<SessionTurnOutcome> {
    this.ids.push({ user: request.user_id ?? "", session: request.session_id ?? "" });
    return Promise.resolve({ ...OK_OUTCOME, session_id: request.session_id ?? "s" });
  }
  runStateless(_request: StatelessTurnRequest, _options: { signal: AbortSignal; emit: EmitEvent }): Promise<TurnOutcome> {
    return Promise.resolve(OK_OUTCOME);
  }
}

const READY: RuntimeHealth = { warmUp: "ready", defaultModel: "default", engines: { default: { state: "ready", degradationTier: "NORMAL" } }, tools: [] };

function makeApp(runner: TurnRunner): ReturnType<typeof createHttpApp>["app"] {
  const deps: HttpDeps = {
    settings: { host: "127.0.0.1", port: 8080, bearerToken: null, corsOrigins: [], allowedHosts: [], maxBodyBytes: 64 * 1024, sessionQueue: false },
    agents: { assistant: "default", other: "default" },
    runner: () => runner,
    health: () => READY,
    version: "0.0.0-test",
    logger: captureLogger().logger,
  };
  return createHttpApp(deps).app;
}

// Header values must be visible ASCII for fetch's Headers; anything else is refused by the client.
const headerSessionId = fc.option(fc.oneof(fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 }), fc.constantFrom("..", "../x", ".hidden", "a".repeat(65))), { nil: undefined });

describe("HTTP request mapping (fuzzed)", () => {
  it("any JSON body maps to a request or a 4xx naming the problem, never a throw of anything else", () => {
    fc.assert(fc.property(anyChatBody, (raw) => expectMappedOr4xx(() => mapChat(raw))), fuzzParams(1500));
  });

  it("the completions and embeddings bodies too", () => {
    const body = fc.oneof(
      fc.record({ model: fc.oneof(fc.constant("default"), anyValue), prompt: fc.oneof(hostileString, fc.array(hostileString, { maxLength: 3 }), anyValue), input: fc.oneof(hostileString, fc.array(fc.oneof(hostileString, fc.array(fc.integer(), { maxLength: 3 })), { maxLength: 3 }), anyValue), max_tokens: anyValue, temperature: anyValue, stream: anyValue, encoding_format: fc.oneof(fc.constantFrom("float", "base64"), anyValue), dimensions: anyValue, echo: anyValue, suffix: anyValue, stop: anyValue }, { requiredKeys: [] }),
      anyValue,
    );
    fc.assert(
      fc.property(body, (raw) => {
        expectMappedOr4xx(() => parseCompletionsRequest(raw));
        expectMappedOr4xx(() => parseEmbeddingsRequest(raw));
      }),
      fuzzParams(1000),
    );
  });
});

describe("POST /v1/chat/completions (fuzzed through the app)", () => {
  it("any body and any X-Session-Id: 200 or a 4xx OpenAI error; ids that reach the runner are safe", async () => {
    const runner = new EchoRunner();
    const app = makeApp(runner);
    const statuses = new Map<number, number>();
    const rawText = fc.oneof(anyChatBody.map((value) => JSON.stringify(value)), fc.string({ maxLength: 100 }), chatBody.map((value) => JSON.stringify(value).slice(0, -1)));
    await fc.assert(
      fc.asyncProperty(rawText, headerSessionId, async (text, sessionHeader) => {
        const headers: Record<string, string> = { "content-type": "application/json", host: "127.0.0.1:8080" };
        if (sessionHeader !== undefined) headers["x-session-id"] = sessionHeader;
        const response = await app.request("/v1/chat/completions", { method: "POST", headers, body: text });
        const body = await response.text();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status === 200) return;
        assert.ok(response.status >= 400 && response.status < 500, `status ${response.status}: ${body}`);
        const error = (JSON.parse(body) as { error: { message: string; type: string; code: string; param: string | null } }).error;
        assert.ok(error.message.length > 0 && error.type.length > 0 && error.code.length > 0);
        assert.ok(error.param === null || typeof error.param === "string");
      }),
      fuzzParams(400),
    );
    // Not vacuous: the generator reaches turns (with session ids) as well as refusals.
    assert.ok((statuses.get(200) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0, JSON.stringify([...statuses]));
    assert.ok(runner.ids.length > 0);
    for (const { user, session } of runner.ids) {
      assert.ok(isSafeId(user), `user id ${JSON.stringify(user)} reached the runner`);
      assert.ok(isSafeId(session), `session id ${JSON.stringify(session)} reached the runner`);
    }
  });
});
