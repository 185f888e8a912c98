// KvKeeper's decisions (when to save, when to restore) against a recording stand-in for the files;
// the real files and node-llama-cpp are exercised in test/e2e/embedded-kv-persistence.test.ts.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { pino } from "pino";
import { kvCacheDir, legacyKvCacheDir } from "../../src/engine/embedded/kv-cache-dir.js";
import { KvKeeper } from "../../src/engine/embedded/kv-keeper.js";
import { adoptLegacyDir, type KvStateFiles, type ModelIdentity, type SavedState } from "../../src/engine/embedded/kv-state-files.js";

const identity: ModelIdentity = { path: "/m.gguf", size: 1, mtime_ms: 1, llama_cpp: "x@1" };
const tokens = (...values: number[]): Token[] => values as Token[];

/** Remembers saves by key; a load puts the saved tokens into the sequence. */
function fakeFiles(): { files: KvStateFiles; saved: Map<string, Token[]>; calls: string[] } {
  const saved = new Map<string, Token[]>();
  const calls: string[] = [];
  const files = {
    save: async (key: string, sequence: { contextTokens: Token[] }) => {
      calls.push(`save ${key}`);
      saved.set(key, [...sequence.contextTokens]);
      return true;
    },
    find: async (key: string): Promise<SavedState | null> => {
      const held = saved.get(key);
      return held === undefined ? null : { key, tokens: held, statePath: "", stateBytes: 0, sha256: "" };
    },
    settled: async () => undefined,
    load: async (state: SavedState, sequence: { contextTokens: Token[] }) => {
      calls.push(`load ${state.key}`);
      sequence.contextTokens = [...state.tokens];
      return true;
    },
  } as unknown as KvStateFiles;
  return { files, saved, calls };
}

const sequenceHolding = (...values: number[]): LlamaContextSequence => ({ contextTokens: tokens(...values) }) as unknown as LlamaContextSequence;

describe("KvKeeper", () => {
  it("saves the owner's state when another conversation takes the sequence, and restores it on the owner's next turn", async () => {
    const { files, calls } = fakeFiles();
    const keeper = new KvKeeper(files, identity, pino({ level: "silent" }));
    const sequence = sequenceHolding();
    await keeper.prepare(sequence, "a", () => tokens(1, 2, 3));
    (sequence as unknown as { contextTokens: Token[] }).contextTokens = tokens(1, 2, 3, 4, 5);
    await keeper.prepare(sequence, "b", () => tokens(1, 9));
    assert.deepEqual(calls, ["save a"]);
    (sequence as unknown as { contextTokens: Token[] }).contextTokens = tokens(1, 9, 9);
    await keeper.prepare(sequence, "a", () => tokens(1, 2, 3, 4, 5, 6));
    assert.deepEqual(calls, ["save a", "save b", "load a"]);
    assert.deepEqual(sequence.contextTokens, tokens(1, 2, 3, 4, 5));
    // The same conversation again: nothing to do.
    await keeper.prepare(sequence, "a", () => tokens(1, 2, 3, 4, 5, 6, 7));
    assert.equal(calls.length, 3);
  });

  it("does not restore a state the prompt does not continue, nor one the sequence already holds more of", async () => {
    const { files, saved, calls } = fakeFiles();
    saved.set("a", tokens(1, 2, 3, 4));
    const keeper = new KvKeeper(files, identity, pino({ level: "silent" }));
    await keeper.prepare(sequenceHolding(), "a", () => tokens(1, 7, 7, 7, 7));
    assert.deepEqual(calls, [], "the prompt shares 1 of 4 saved tokens");
    await keeper.prepare(sequenceHolding(1, 2, 3, 4, 5), "a", () => tokens(1, 2, 3, 4, 5, 6));
    assert.deepEqual(calls, [], "the sequence (nobody's) already holds more of the prompt");
    await keeper.prepare(sequenceHolding(), "a", () => undefined);
    assert.deepEqual(calls, ["load a"], "a prompt that cannot be rendered ahead: the session's state is restored");
  });

  it("saveAll saves what is not on disk yet, once; a restored state unchanged is not saved again", async () => {
    const { files, calls } = fakeFiles();
    const keeper = new KvKeeper(files, identity, pino({ level: "silent" }));
    const [x, y, z] = [sequenceHolding(), sequenceHolding(), sequenceHolding(5, 5)];
    await keeper.prepare(x, "a", () => undefined);
    await keeper.prepare(y, undefined, () => undefined);
    (x as unknown as { contextTokens: Token[] }).contextTokens = tokens(1, 2);
    await keeper.saveAll([x, y, z]);
    assert.deepEqual(calls, ["save a"], "y and z belong to no conversation");
    const again = new KvKeeper(files, identity, pino({ level: "silent" }));
    const w = sequenceHolding();
    await again.prepare(w, "a", () => tokens(1, 2, 3));
    await again.saveAll([w]);
    assert.deepEqual(calls, ["save a", "load a"]);
    // Closed: no more saves or restores.
    await again.prepare(sequenceHolding(), "a", () => tokens(1, 2, 3));
    assert.equal(calls.length, 2);
  });

  it("kv-cache folders: one per model under data_dir, named by storeName (a name unsafe as a folder name is hashed)", () => {
    assert.equal(kvCacheDir("/data", "default"), path.join("/data", "kv-cache", "default"));
    assert.equal(kvCacheDir("/data", "Qwen"), path.join("/data", "kv-cache", "+qwen"));
    assert.match(kvCacheDir("/data", "../x"), /kv-cache\/\+_[0-9a-f]{16}$/);
    assert.equal(legacyKvCacheDir("/data", "default"), null);
    assert.equal(legacyKvCacheDir("/data", "Qwen"), path.join("/data", "kv-cache", "Qwen"));
    assert.match(legacyKvCacheDir("/data", "../x") ?? "", /kv-cache\/model-[0-9a-f]{16}$/);
  });

  it("an earlier version's kv-cache folder (that exact name) is moved to the new name; a same-letters folder of another model is not", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "local-ai-kv-legacy-"));
    try {
      const logger = pino({ level: "silent" });
      await mkdir(path.join(root, "kv-cache", "Qwen"), { recursive: true });
      await writeFile(path.join(root, "kv-cache", "Qwen", "a.json"), "{}");
      await adoptLegacyDir(path.join(root, "kv-cache", "Qwen"), kvCacheDir(root, "Qwen"), logger);
      assert.deepEqual(await readdir(path.join(root, "kv-cache")), ["+qwen"]);
      assert.deepEqual(await readdir(kvCacheDir(root, "Qwen")), ["a.json"]);
      // Again: nothing left to move, nothing changes.
      await adoptLegacyDir(path.join(root, "kv-cache", "Qwen"), kvCacheDir(root, "Qwen"), logger);
      assert.deepEqual(await readdir(path.join(root, "kv-cache")), ["+qwen"]);
      // `QWEN`'s old name is not on disk under exactly that name: `+qwen` is not taken for it.
      await adoptLegacyDir(path.join(root, "kv-cache", "QWEN"), kvCacheDir(root, "QWEN"), logger);
      assert.deepEqual(await readdir(path.join(root, "kv-cache")), ["+qwen"]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
