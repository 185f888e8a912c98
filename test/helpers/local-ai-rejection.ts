import assert from "node:assert/strict";
import { LocalAiError } from "../../src/client/index.js";

/** The LocalAiError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<LocalAiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof LocalAiError, `a LocalAiError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a rejection");
}
