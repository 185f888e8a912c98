// KvStateFiles on a real folder, with a stand-in for the sequence (its state file is bytes we
// choose); node-llama-cpp's own state files are exercised in test/e2e/embedded-kv-persistence.test.ts.
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { pino } from "pino";
import { KvStateFiles, type ModelIdentity } from "../../src/engine/embedded/kv-state-files.js";

const identity: ModelIdentity = { path: "/m.gguf", size: 1, mtime_ms: 1, llama_cpp: "x@1" };

/** A sequence whose saved state is `bytes`; `writes` counts its state writes. */
function standIn(tokens: number[], bytes: string, writes: string[]): LlamaContextSequence {
  return {
    contextTokens: tokens as Token[],
    saveStateToFile: async (file: string) => {
      writes.push(path.basename(file));
      await writeFile(file, bytes);
    },
  } as unknown as LlamaContextSequence;
}

const newFiles = async (budget = 1024 * 1024): Promise<{ dir: string; files: KvStateFiles }> => {
  const dir = path.join(await mkdtemp(path.join(tmpdir(), "local-ai-kvfiles-")), "kv-cache", "default");
  return { dir, files: new KvStateFiles(dir, budget, pino({ level: "silent" })) };
};

describe("KvStateFiles", () => {
  it("a background save resolves once the state is written; find waits for the rest, so the state is found at once", async () => {
    const { dir, files } = await newFiles();
    const writes: string[] = [];
    assert.equal(await files.save("u/a", standIn([1, 2, 3], "state-a", writes), identity, { background: true }), true);
    assert.equal(writes.length, 1, "the sequence's state was written before save resolved");
    const found = await files.find("u/a", identity);
    assert.deepEqual(found?.tokens, [1, 2, 3]);
    assert.equal(await readFile(found.statePath, "utf8"), "state-a");
    assert.deepEqual((await readdir(dir)).filter((name) => name.includes(".tmp-")), [], "no temp file left once found");
  });

  it("find waits only for its own key's save: the conversation that evicted another does not wait for that save", async () => {
    const { files } = await newFiles(256 * 1024 * 1024);
    // A large state: hashing it keeps a's save busy well after the state file is written.
    await files.save("u/a", standIn([1], "x".repeat(64 * 1024 * 1024), []), identity, { background: true });
    const first = await Promise.race([files.find("u/b", identity).then(() => "find of another key"), files.settled().then(() => "a's save finished")]);
    assert.equal(first, "find of another key");
    assert.deepEqual((await files.find("u/a", identity))?.tokens, [1], "a's own find waited for it");
  });

  it("saves finish in call order: the later state of a key wins, and settled() waits for all of them", async () => {
    const { dir, files } = await newFiles();
    const writes: string[] = [];
    await files.save("u/a", standIn([1], "first", writes), identity, { background: true });
    await files.save("u/b", standIn([2], "other", writes), identity, { background: true });
    await files.save("u/a", standIn([1, 5], "second", writes), identity, { background: true });
    await files.settled();
    assert.equal((await readdir(dir)).length, 4, "two keys, a state and a meta each");
    const a = await files.find("u/a", identity);
    assert.deepEqual(a?.tokens, [1, 5]);
    assert.equal(await readFile(a.statePath, "utf8"), "second");
    assert.deepEqual((await files.find("u/b", identity))?.tokens, [2]);
  });

  it("a save that is not in the background resolves with the whole outcome: false for a state over the budget, which is not kept", async () => {
    const { dir, files } = await newFiles(4);
    assert.equal(await files.save("u/a", standIn([1], "too large", []), identity), false);
    assert.deepEqual(await readdir(dir), []);
    assert.equal(await files.find("u/a", identity), null);
  });

  it("a state write that fails is a warning and false, never a failed turn", async () => {
    const { dir, files } = await newFiles();
    const failing = { contextTokens: [1] as Token[], saveStateToFile: async () => Promise.reject(new Error("disk full")) } as unknown as LlamaContextSequence;
    assert.equal(await files.save("u/a", failing, identity, { background: true }), false);
    await files.settled();
    assert.deepEqual(await readdir(dir), []);
  });
});
