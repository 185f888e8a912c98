// A conversation's KV state saved by one embedded engine and restored by the next (real
// node-llama-cpp, the tiny generated GGUF whose random weights make every token depend on the
// context): the restored turn evaluates only what is new and answers exactly as a cold one, and a
// corrupt, truncated, foreign or over-budget state is ignored, never trusted.
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { parseConfigText } from "../../src/config/load-config.js";
import type { ModelConfig } from "../../src/config/schema.js";
import type { ChatMessage } from "../../src/shared/conversation/chat-message.js";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import { EmbeddedEngine } from "../../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../../src/engine/embedded/llama-runtime.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

const llama = new LlamaRuntime(pino({ level: "silent" }));
let tinyPath = "";

function modelConfig(): ModelConfig {
  const result = parseConfigText(`llama:\n  models:\n    m:\n      path: ${JSON.stringify(tinyPath)}\n      threads: 1\n      ctx_size: 1024\n`, {}, "/");
  assert.ok(result.ok, JSON.stringify(result));
  return result.config.llama.models.m!;
}

interface Outcome {
  text: string;
  usage: Extract<EngineChunk, { type: "usage" }>;
}

/** One engine's life: the requests in order, then close (which saves what the sequences hold). */
async function withEngine(dir: string, diskBytes: number, requests: GenerateRequest[], parallel = 1): Promise<{ outcomes: Outcome[]; logs: Array<Record<string, unknown>> }> {
  const capture = captureLogger("debug");
  const engine = new EmbeddedEngine("m", modelConfig(), { llama, logger: capture.logger, parallel, kvCache: { dir, diskBytes } });
  const outcomes: Outcome[] = [];
  try {
    for (const request of requests) {
      let text = "";
      let usage: Outcome["usage"] | undefined;
      for await (const chunk of engine.generate(request)) {
        if (chunk.type === "text") text += chunk.delta;
        if (chunk.type === "usage") usage = chunk;
      }
      assert.ok(usage, "a usage chunk");
      outcomes.push({ text, usage });
    }
  } finally {
    await engine.close();
  }
  return { outcomes, logs: capture.records() };
}

const SYSTEM: ChatMessage = { role: "system", content: "You are a helpful assistant." };
const request = (cacheKey: string, messages: ChatMessage[]): GenerateRequest => ({ messages: [SYSTEM, ...messages], temperature: 0, maxTokens: 12, cacheKey });
const first = (input: string): ChatMessage[] => [{ role: "user", content: input }];
const second = (input: string, reply: string, next: string): ChatMessage[] => [...first(input), { role: "assistant", content: reply }, { role: "user", content: next }];

const newDir = (): Promise<string> => mkdtemp(path.join(tmpdir(), "kv-persist-"));
const MiB = 1024 * 1024;

describe("KV state across engines (embedded, saved under data_dir)", () => {
  let reply = "";
  let cold: Outcome;
  const INPUT = "Tell me a long story about a river and the stones along its bed";
  const NEXT = "And then what happened";

  before(async () => {
    tinyPath = await ensureFixture("tiny", { seed: 3 });
    const dir = await newDir();
    reply = (await withEngine(dir, 0, [request("u/a", first(INPUT))])).outcomes[0]!.text;
    // The reference: the second turn evaluated from nothing (no saved state: the cache is off).
    cold = (await withEngine(dir, 0, [request("u/a", second(INPUT, reply, NEXT))])).outcomes[0]!;
    assert.equal(cold.usage.cachedTokens, 0);
    assert.deepEqual(await readdir(dir), [], "kv_cache_disk_bytes 0 writes nothing");
  });

  after(async () => {
    await llama.dispose();
  });

  /** A directory holding the state the first turn left at close, and its two files. */
  async function savedAfterFirstTurn(): Promise<{ dir: string; state: string; meta: string }> {
    const dir = await newDir();
    const { outcomes } = await withEngine(dir, 64 * MiB, [request("u/a", first(INPUT))]);
    assert.equal(outcomes[0]!.text, reply);
    const files = (await readdir(dir)).sort();
    assert.equal(files.length, 2, files.join(", "));
    assert.match(files[0]!, /^[0-9a-f]{40}\.json$/);
    assert.match(files[1]!, /^[0-9a-f]{40}\.state$/);
    for (const file of files) assert.equal((await stat(path.join(dir, file))).mode & 0o777, 0o600, `${file}: it encodes the conversation`);
    return { dir, meta: path.join(dir, files[0]!), state: path.join(dir, files[1]!) };
  }

  it("the next turn in a new engine restores the state: only the new tokens are evaluated, the answer is the cold one", async () => {
    const { dir, meta } = await savedAfterFirstTurn();
    const saved = JSON.parse(await readFile(meta, "utf8")) as { cache_key: string; tokens: number[]; model: { path: string } };
    assert.equal(saved.cache_key, "u/a");
    assert.equal(saved.model.path, tinyPath);
    const { outcomes, logs } = await withEngine(dir, 64 * MiB, [request("u/a", second(INPUT, reply, NEXT))]);
    const restored = outcomes[0]!;
    assert.equal(restored.text, cold.text);
    assert.equal(restored.usage.inputTokens, cold.usage.inputTokens);
    assert.ok((restored.usage.cachedTokens ?? 0) >= saved.tokens.length - 12, `cached ${String(restored.usage.cachedTokens)} of ${saved.tokens.length} saved`);
    assert.ok((restored.usage.cachedTokens ?? 0) < restored.usage.inputTokens);
    assert.ok(logs.some((record) => record.msg === "kv state restored"));
  });

  it("another conversation does not get the state", async () => {
    const { dir } = await savedAfterFirstTurn();
    const { outcomes } = await withEngine(dir, 64 * MiB, [request("u/b", second(INPUT, reply, NEXT))]);
    assert.equal(outcomes[0]!.usage.cachedTokens, 0);
    assert.equal(outcomes[0]!.text, cold.text);
  });

  for (const [name, damage, reason] of [
    ["corrupt (bytes flipped in the middle)", async (file: string) => {
      const bytes = await readFile(file);
      for (let at = bytes.length >> 1; at < (bytes.length >> 1) + 64; at++) bytes[at] = (bytes[at] ?? 0) ^ 0xff;
      await writeFile(file, bytes);
    }, /does not match its meta/],
    ["truncated", async (file: string) => truncate(file, 1000), /does not match its meta/],
  ] as const) {
    it(`a ${name} state file is ignored: the turn is evaluated cold and answers correctly`, async () => {
      const { dir, state } = await savedAfterFirstTurn();
      await damage(state);
      const { outcomes, logs } = await withEngine(dir, 64 * MiB, [request("u/a", second(INPUT, reply, NEXT))]);
      assert.equal(outcomes[0]!.usage.cachedTokens, 0);
      assert.equal(outcomes[0]!.text, cold.text);
      const ignored = logs.find((record) => record.msg === "kv state ignored");
      assert.ok(ignored, JSON.stringify(logs));
      assert.match(String(ignored.reason), reason);
    });
  }

  for (const [name, edit, message] of [
    ["another model file", (meta: Record<string, unknown>) => ({ ...meta, model: { ...(meta.model as object), mtime_ms: 1 } }), "kv state ignored: saved with another model file or llama.cpp build"],
    ["another llama.cpp build", (meta: Record<string, unknown>) => ({ ...meta, model: { ...(meta.model as object), llama_cpp: "ggml-org/llama.cpp@b1" } }), "kv state ignored: saved with another model file or llama.cpp build"],
    ["an unreadable meta", () => "{not json", "kv state ignored: unreadable meta"],
  ] as const) {
    it(`a state saved with ${name} is ignored`, async () => {
      const { dir, meta } = await savedAfterFirstTurn();
      const edited = edit(JSON.parse(await readFile(meta, "utf8")) as Record<string, unknown>);
      await writeFile(meta, typeof edited === "string" ? edited : JSON.stringify(edited));
      const { outcomes, logs } = await withEngine(dir, 64 * MiB, [request("u/a", second(INPUT, reply, NEXT))]);
      assert.equal(outcomes[0]!.usage.cachedTokens, 0);
      assert.equal(outcomes[0]!.text, cold.text);
      assert.ok(logs.some((record) => record.msg === message), JSON.stringify(logs.map((record) => record.msg)));
    });
  }

  it("eviction within one engine (parallel 1): each conversation's state is saved when another takes the sequence and restored on its next turn", async () => {
    const dir = await newDir();
    const other = "Describe a lantern in a copper harbor at night";
    const { outcomes } = await withEngine(dir, 64 * MiB, [
      request("u/a", first(INPUT)),
      request("u/b", first(other)),
      request("u/a", second(INPUT, reply, NEXT)),
    ]);
    const [a1, b1, a2] = outcomes as [Outcome, Outcome, Outcome];
    assert.equal(a1.text, reply);
    assert.ok((b1.usage.cachedTokens ?? 0) < a1.usage.inputTokens / 2, "b shares no more than the system prompt with a");
    assert.ok((a2.usage.cachedTokens ?? 0) >= a1.usage.inputTokens, `a2 cached ${String(a2.usage.cachedTokens)}, a1's prompt was ${a1.usage.inputTokens}`);
    assert.equal(a2.text, cold.text);
    // a's state (evicted by b), b's (evicted by a2) and a's again at close: two conversations on disk.
    assert.equal((await readdir(dir)).length, 4);
  });

  it("the disk budget keeps the most recently used states; a state larger than the budget is not kept", async () => {
    const { state } = await savedAfterFirstTurn();
    const oneState = (await readFile(state)).length;
    const dir = await newDir();
    // Room for one conversation, not two: saving b's state deletes a's (the least recently used).
    await withEngine(dir, Math.floor(oneState * 1.5), [request("u/a", first(INPUT)), request("u/b", first("Tell me a long story about a forest and the birds along its paths"))]);
    const files = await readdir(dir);
    assert.equal(files.length, 2, files.join(", "));
    const kept = JSON.parse(await readFile(path.join(dir, files.find((file) => file.endsWith(".json"))!), "utf8")) as { cache_key: string };
    assert.equal(kept.cache_key, "u/b");
    const tiny = await newDir();
    await withEngine(tiny, 1024, [request("u/a", first(INPUT))]);
    assert.deepEqual(await readdir(tiny), []);
  });
});
