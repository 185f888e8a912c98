import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { createDispatcher } from "../../src/protocol/dispatcher.js";
import { defineMethod, type MethodContext, type MethodDefinition, type ParamsSchema } from "../../src/protocol/method.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { cancelParams, chatParams, initializeParams, pullParams } from "../../src/protocol/methods/params-schemas.js";
import { captureLogger } from "../helpers/capture-logger.js";

const table = new Map<string, MethodDefinition<never>>([
  ["echo", defineMethod({ params: z.object({ text: z.string() }), result: async () => z.unknown(), handle: async (params) => ({ text: params.text }) })],
]);

function context(signal = new AbortController().signal): MethodContext {
  return { id: 1, signal, log: captureLogger().logger, emit: () => undefined };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RuntimeError);
    return error.code;
  }
  return "no error";
}

describe("createDispatcher (the dispatch path the stdio server runs)", () => {
  const dispatch = createDispatcher(table);

  it("runs a method with validated params", async () => {
    assert.deepEqual(await dispatch("echo", { text: "hi" }, context()), { text: "hi" });
  });

  it("answers unknown_method for a name not in the table", async () => {
    assert.equal(await codeOf(dispatch("nope", {}, context())), "unknown_method");
  });

  it("answers invalid_params naming the param", async () => {
    try {
      await dispatch("echo", { text: 5 }, context());
      assert.fail("expected an error");
    } catch (error) {
      assert.ok(error instanceof RuntimeError);
      assert.equal(error.code, "invalid_params");
      assert.match(error.message, /text/);
    }
  });

  it("does not start a method whose request is already cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    assert.equal(await codeOf(dispatch("echo", { text: "x" }, context(controller.signal))), "cancelled");
  });

  it("validates calls in arrival order: a later call never overtakes a schema still loading; handlers run concurrently", async () => {
    let releaseSchema!: () => void;
    const schemaGate = new Promise<void>((resolve) => (releaseSchema = resolve));
    let releaseHandler!: () => void;
    const handlerGate = new Promise<void>((resolve) => (releaseHandler = resolve));
    const order: string[] = [];
    const ordered = createDispatcher(
      new Map<string, MethodDefinition<never>>([
        ["lazy", defineMethod({ params: async () => schemaGate.then(() => z.object({ n: z.number() })), result: async () => z.unknown(), handle: async () => "lazy" })],
        ["slow", defineMethod({ params: z.object({}), result: async () => z.unknown(), handle: async () => handlerGate.then(() => "slow") })],
        ["ping", defineMethod({ params: z.object({}), result: async () => z.unknown(), handle: async () => "pong" })],
      ]),
    );
    const note = (name: string) => (outcome: unknown) => void order.push(`${name}: ${typeof outcome === "string" ? outcome : (outcome as RuntimeError).code}`);
    const lazy = ordered("lazy", { n: "x" }, context()).then(note("lazy"), note("lazy"));
    const ping = ordered("ping", {}, context()).then(note("ping"), note("ping"));
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(order, [], "ping waits for the earlier call's validation");
    releaseSchema();
    await Promise.all([lazy, ping]);
    assert.deepEqual(order, ["lazy: invalid_params", "ping: pong"]);
    const slow = ordered("slow", {}, context()).then(note("slow"));
    assert.equal(await ordered("ping", {}, context()), "pong", "a running handler holds no later call");
    releaseHandler();
    await slow;
  });
});

describe("createDispatcher: params of the wrong shape say what is accepted", () => {
  const answering = (params: ParamsSchema<unknown>): MethodDefinition<never> => defineMethod({ params, result: async () => z.unknown(), handle: async () => "ran" });
  const real = new Map<string, MethodDefinition<never>>([
    ["chat", answering(chatParams)],
    ["cancel", answering(cancelParams)],
    ["initialize", answering(initializeParams)],
    ["pull", answering(pullParams)],
  ]);
  const dispatch = createDispatcher(real);

  async function failure(method: string, params: Record<string, unknown>): Promise<{ message: string; issues: unknown }> {
    try {
      await dispatch(method, params, context());
    } catch (error) {
      assert.ok(error instanceof RuntimeError);
      assert.equal(error.code, "invalid_params");
      return { message: error.message, issues: error.details?.issues };
    }
    return assert.fail("expected invalid_params");
  }

  it("a union param names itself and its options instead of zod's 'Invalid input'", async () => {
    assert.deepEqual(await failure("chat", { input: 5 }), {
      message: 'Invalid params for "chat": input: must be a string or a list (found 5)',
      issues: [{ param: "input", message: "must be a string or a list (found 5)" }],
    });
    assert.equal((await failure("cancel", { request_id: true })).message, 'Invalid params for "cancel": request_id: must be a string or a number (found true)');
    assert.equal((await failure("initialize", { protocol_versions: [1, null] })).message, 'Invalid params for "initialize": protocol_versions.1: must be an integer or a string (found null)');
  });

  it("inside a list, the bad part is named (the list itself was the right type)", async () => {
    assert.equal((await failure("chat", { input: [{ type: "video" }] })).message, 'Invalid params for "chat": input.0.type: must be one of "text", "image_url", "resource" (found "video")');
    assert.equal((await failure("chat", { input: [{ type: "text", text: "a" }, { type: "text" }] })).message, 'Invalid params for "chat": input.1.text: is required: must be a string');
    assert.equal((await failure("chat", { input: [{ type: "image_url", image_url: { url: 7 } }] })).message, 'Invalid params for "chat": input.0.image_url.url: must be a string (found 7)');
  });

  it("a missing or mistyped plain param says what it must be", async () => {
    assert.equal((await failure("pull", {})).message, 'Invalid params for "pull": ref: is required: must be a string');
    assert.equal((await failure("pull", { ref: "m.gguf", force: "yes" })).message, 'Invalid params for "pull": force: must be true or false (found "yes")');
  });

  it("keeps the messages that already say what is wrong", async () => {
    assert.equal((await failure("chat", { sesion_id: "s", input: "hi" })).message, 'Invalid params for "chat": sesion_id: unknown param (did you mean "session_id"?); accepted: user_id, session_id, agent, input, prompt, resume, approve_execution, elicitation, keep_alive');
    assert.equal((await failure("chat", {})).message, 'Invalid params for "chat": input: required (a non-empty string or content parts) unless resume is true or a prompt is given');
  });

  it("accepts what it accepted before", async () => {
    assert.equal(await dispatch("chat", { input: [{ type: "text", text: "a" }, { type: "image_url", image_url: { url: "" } }] }, context()), "ran");
    assert.equal(await dispatch("cancel", { request_id: 3 }, context()), "ran");
  });
});
