// validate-gguf: a GGUF that would abort llama.cpp is refused with the reason, before any native
// code reads it.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ggufMetadataProblems, validateGguf } from "../../src/engine/plan/validate-gguf.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { ensureFixture, gguf } from "../fixtures/gguf/index.js";
import { writeEditedTinyModel } from "../helpers/plan-fixtures.js";

async function rejection(promise: Promise<unknown>): Promise<RuntimeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RuntimeError, String(error));
    return error;
  }
  assert.fail("expected a RuntimeError");
}

describe("validateGguf", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "plan-gguf-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("accepts the tiny fixture and returns its metadata", async () => {
    const info = await validateGguf(await ensureFixture("tiny"));
    assert.equal((info.metadata.general as { architecture: string }).architecture, "llama");
  });

  it("refuses a model without llama.feed_forward_length as model_missing, naming the key", async () => {
    const file = await writeEditedTinyModel(path.join(dir, "no-ffn.gguf"), (meta) => delete meta["llama.feed_forward_length"]);
    const error = await rejection(validateGguf(file));
    assert.equal(error.code, "model_missing");
    assert.equal(error.details?.reason, "bad_metadata");
    assert.deepEqual(error.details?.problems, ["llama.feed_forward_length is missing"]);
    assert.match(error.message, /is not a loadable model: llama\.feed_forward_length is missing\. llama\.cpp needs these/);
  });

  it("refuses a zero head count and a missing vocabulary, listing both", async () => {
    const file = await writeEditedTinyModel(path.join(dir, "zero-heads.gguf"), (meta) => {
      meta["llama.attention.head_count"] = gguf.u32(0);
      delete meta["tokenizer.ggml.tokens"];
    });
    const error = await rejection(validateGguf(file));
    assert.deepEqual(error.details?.problems, [
      "llama.attention.head_count is 0, not a positive number",
      "tokenizer.ggml.tokens is missing or empty (the file has no vocabulary)",
    ]);
  });

  it("turns a missing file and a file that is not GGUF into model_missing with the reason", async () => {
    const missing = await rejection(validateGguf(path.join(dir, "absent.gguf")));
    assert.equal(missing.code, "model_missing");
    assert.equal(missing.details?.reason, "missing");
    await writeFile(path.join(dir, "page.gguf"), "<html>login</html>");
    const html = await rejection(validateGguf(path.join(dir, "page.gguf")));
    assert.equal(html.details?.reason, "bad_magic");
  });

  it("refuses a header-only file (no metadata at all)", async () => {
    const header = Buffer.alloc(24);
    header.write("GGUF", 0, "latin1");
    header.writeUInt32LE(3, 4);
    await writeFile(path.join(dir, "header.gguf"), header);
    const error = await rejection(validateGguf(path.join(dir, "header.gguf")));
    assert.equal(error.code, "model_missing");
    assert.match(error.message, /general\.architecture is missing/);
  });
});

describe("ggufMetadataProblems", () => {
  const llama = (extra: Record<string, unknown> = {}): unknown => ({
    general: { architecture: "llama" },
    llama: { block_count: 2, embedding_length: 64, context_length: 2048, feed_forward_length: 192, attention: { head_count: 4 }, ...extra },
    tokenizer: { ggml: { model: "llama", tokens: ["a", "b"] } },
  });

  it("is empty for complete llama metadata, and accepts per-layer arrays with some zeros", () => {
    assert.deepEqual(ggufMetadataProblems(llama()), []);
    assert.deepEqual(ggufMetadataProblems(llama({ attention: { head_count: [4, 0] } })), []);
    assert.deepEqual(ggufMetadataProblems(llama({ attention: { head_count: [0, 0] } })), ["llama.attention.head_count is an array of 2, not a positive number"]);
  });

  it("does not require attention or feed-forward sizes of state-space models", () => {
    const mamba = { general: { architecture: "mamba" }, mamba: { block_count: 2, embedding_length: 64, context_length: 2048 }, tokenizer: { ggml: { model: "gpt2", tokens: ["a"] } } };
    assert.deepEqual(ggufMetadataProblems(mamba), []);
  });

  it("stops at a missing architecture, and accepts a tokenizer-less model (model none)", () => {
    assert.deepEqual(ggufMetadataProblems({}), ["general.architecture is missing (the file does not say what model it is)"]);
    const none = llama() as { tokenizer: { ggml: { model: string; tokens?: unknown } } };
    none.tokenizer.ggml = { model: "none" };
    assert.deepEqual(ggufMetadataProblems(none), []);
  });
});
