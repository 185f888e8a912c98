import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { dispatch } from "../../src/protocol/dispatcher.js";
import { defineMethod, type MethodContext, type MethodDefinition } from "../../src/protocol/method.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
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

describe("dispatch", () => {
  it("runs a method with validated params", async () => {
    assert.deepEqual(await dispatch(table, "echo", { text: "hi" }, context()), { text: "hi" });
  });

  it("answers unknown_method for a name not in the table", async () => {
    assert.equal(await codeOf(dispatch(table, "nope", {}, context())), "unknown_method");
  });

  it("answers invalid_params naming the param", async () => {
    try {
      await dispatch(table, "echo", { text: 5 }, context());
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
    assert.equal(await codeOf(dispatch(table, "echo", { text: "x" }, context(controller.signal))), "cancelled");
  });
});
