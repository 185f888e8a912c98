import assert from "node:assert/strict";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { createStore } from "../../src/store/create-store.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { MinisearchMemoryIndex } from "../../src/store/memory-index.js";
import { makeEntry, tempDataDir } from "../helpers/store-fixtures.js";

const NOTES = `# Garden

The tomatoes are planted in the north bed, next to the basil.

Water them every second evening.

# Car

The car's oil was changed in March at the garage on Elm Street.
`;

describe("MinisearchMemoryIndex", () => {
  let dataDir: string;
  let store: FileSessionStore;
  let memory: MinisearchMemoryIndex;
  beforeEach(async () => {
    dataDir = await tempDataDir();
    store = new FileSessionStore(dataDir);
    await store.appendTurn("u1", "s1", makeEntry(1, "How long should I boil pasta?", "About nine minutes for spaghetti, until al dente."));
    await store.appendTurn("u1", "s1", makeEntry(2, "Will it rain tomorrow?", "I cannot see weather forecasts."));
    await store.appendTurn("u1", "s2", makeEntry(3, "What is the capital of France?", "The capital of France is Paris."));
    await store.appendTurn("u2", "s9", makeEntry(4, "Secret of another user: France", "u2 private answer"));
    await mkdir(path.join(dataDir, "memory", "u1"), { recursive: true });
    await writeFile(path.join(dataDir, "memory", "u1", "notes.md"), NOTES);
    await writeFile(path.join(dataDir, "memory", "u1", "ignored.txt"), "tomatoes tomatoes tomatoes");
    memory = new MinisearchMemoryIndex(dataDir, store);
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it("indexes the user's past turns across sessions and their notes, one document each", async () => {
    await memory.ensureUser("u1");
    assert.equal(memory.size("u1"), 3 + 3); // 3 turns + 3 note paragraphs
    const [best] = memory.search("u1", "what was the capital of France again?", 200);
    assert.ok(best);
    assert.equal(best.source, `session:s2@${makeEntry(3).at}`);
    assert.match(best.text, /Paris/);
    assert.ok(best.score > 0);
    assert.ok(!memory.search("u1", "France", 500).some((snippet) => snippet.text.includes("u2 private")), "another user's turns leak");
  });

  it("finds note sections, titled by their heading", async () => {
    await memory.ensureUser("u1");
    const [best] = memory.search("u1", "where did I plant the tomatoes", 200);
    assert.equal(best?.source, "note:notes.md#1");
    assert.equal(best?.text, "Garden\nThe tomatoes are planted in the north bed, next to the basil.");
    assert.equal(memory.search("u1", "garage oil", 200)[0]?.source, "note:notes.md#3");
  });

  it("tolerates typos and prefixes", async () => {
    await memory.ensureUser("u1");
    assert.match(memory.search("u1", "capitol of Frnce", 200)[0]?.text ?? "", /Paris/);
    assert.match(memory.search("u1", "spagh", 200)[0]?.text ?? "", /spaghetti/);
  });

  it("respects the token budget and cuts the last snippet", async () => {
    await memory.ensureUser("u1");
    for (const budget of [0, 3, 10, 25, 60, 1000]) {
      const snippets = memory.search("u1", "France pasta tomatoes oil rain", budget);
      const chars = snippets.reduce((sum, snippet) => sum + snippet.text.length, 0);
      assert.ok(chars <= budget * 4, `budget ${budget}: ${chars} chars`);
    }
    const small = memory.search("u1", "capital France", 10);
    assert.equal(small.length, 1);
    assert.ok(small[0]?.text.endsWith("…"));
    assert.equal(small[0]?.text.length, 40);
    assert.equal(memory.search("u1", "capital France", 0).length, 0);
    assert.equal(memory.search("u1", "   ", 100).length, 0);
  });

  it("makes a turn added after the build searchable", async () => {
    await memory.ensureUser("u1");
    assert.equal(memory.search("u1", "zebra migration", 100).length, 0);
    const entry = makeEntry(5, "When do zebras migrate?", "The great zebra migration peaks around July.");
    memory.addTurn("u1", "s3", entry);
    memory.addTurn("u1", "s3", entry); // the same turn twice is one document
    const [best] = memory.search("u1", "zebra migration", 100);
    assert.equal(best?.source, `session:s3@${entry.at}`);
    assert.equal(memory.size("u1"), 7);
  });

  it("ignores addTurn for a user not loaded yet (the build reads it from disk)", async () => {
    memory.addTurn("u1", "s1", makeEntry(9, "ignored", "ignored"));
    assert.equal(memory.size("u1"), 0);
    assert.deepEqual(memory.search("u1", "pasta", 100), []);
  });

  it("ensureUser is idempotent, also when called concurrently", async () => {
    await Promise.all([memory.ensureUser("u1"), memory.ensureUser("u1")]);
    const size = memory.size("u1");
    await memory.ensureUser("u1");
    assert.equal(memory.size("u1"), size);
    assert.equal(memory.search("u1", "Paris", 1000).filter((snippet) => snippet.text.includes("Paris")).length, 1);
  });

  it("keeps only the newest turns per user", async () => {
    memory = new MinisearchMemoryIndex(dataDir, store, { maxTurns: 2 });
    await memory.ensureUser("u1");
    assert.equal(memory.search("u1", "spaghetti", 100).length, 0, "the oldest turn is dropped");
    assert.match(memory.search("u1", "Paris", 100)[0]?.text ?? "", /Paris/);
    memory.addTurn("u1", "s3", makeEntry(6, "favourite colour?", "You said teal."));
    assert.equal(memory.search("u1", "forecasts", 100).length, 0, "the next oldest is dropped on add");
    assert.equal(memory.search("u1", "teal", 100).length, 1);
  });

  it("caps snippet length", async () => {
    await store.appendTurn("u3", "s1", makeEntry(1, "long one", `marker ${"word ".repeat(1000)}`));
    memory = new MinisearchMemoryIndex(dataDir, store, { maxSnippetChars: 100 });
    await memory.ensureUser("u3");
    const [best] = memory.search("u3", "marker", 10_000);
    assert.equal(best?.text.length, 100);
  });

  it("searches text written without spaces (CJK) by character pairs", async () => {
    await store.appendTurn("u4", "s1", makeEntry(1, "我喜欢吃北京烤鸭", "北京烤鸭很好吃。"));
    await store.appendTurn("u4", "s1", makeEntry(2, "今日は雨です", "傘を持って行きましょう。"));
    await memory.ensureUser("u4");
    assert.match(memory.search("u4", "烤鸭", 100)[0]?.text ?? "", /北京烤鸭/);
    assert.match(memory.search("u4", "雨", 100)[0]?.text ?? "", /雨/);
  });

  it("works for a user with nothing on disk, and through createStore", async () => {
    const { memory: fromFactory, sessions } = createStore(dataDir);
    await fromFactory.ensureUser("nobody");
    assert.deepEqual(fromFactory.search("nobody", "anything", 100), []);
    await sessions.appendTurn("u1", "s5", makeEntry(7, "unique kumquat question", "kumquat answer"));
    await fromFactory.ensureUser("u1");
    assert.match(fromFactory.search("u1", "kumquat", 100)[0]?.text ?? "", /kumquat/);
  });
});
