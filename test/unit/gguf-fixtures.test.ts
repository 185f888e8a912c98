// The GGUF fixture writers, checked against the real reader and real llama.cpp inference
// through node-llama-cpp (CPU, prebuilt binary, threads 1).
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  defineChatSessionFunction, getLlama, LlamaChatSession, LlamaLogLevel, readGgufFileInfo, resolveChatWrapper,
  type ChatWrapper, type Llama, type LlamaModel, type Token,
} from "node-llama-cpp";
import {
  DEMO_SENTENCE, DEMO_TOOL_CALL_TEXT, DEMO_TOOL_TRIGGER, ensureFixture, f16BitsToF32, f32ToF16Bits,
  fixturePath, GgmlType, gguf, SpmVocabBuilder, TokenType, tinyVocab, writeGguf, type GgufTensor,
} from "../fixtures/gguf/index.js";

const THREADS = 1;
let dir = "";
let llama: Llama;
const models: LlamaModel[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "gguf-fixtures-"));
  llama = await getLlama({
    build: "never",
    gpu: false,
    logLevel: LlamaLogLevel.warn,
    logger: (level, message) => process.stderr.write(`[llama ${level}] ${message}\n`),
  });
});

after(async () => {
  try {
    for (const model of models) await model.dispose();
    await llama.dispose();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

async function load(path: string): Promise<LlamaModel> {
  const model = await llama.loadModel({ modelPath: path });
  models.push(model);
  return model;
}

// Resolving the chat wrapper renders the Jinja template many times (~1.3 s here), so it is
// done once per model; it is still node-llama-cpp's own automatic choice.
const wrappers = new Map<LlamaModel, ChatWrapper>();

function chatWrapperOf(model: LlamaModel): ChatWrapper {
  const wrapper = wrappers.get(model) ?? resolveChatWrapper(model);
  wrappers.set(model, wrapper);
  return wrapper;
}

async function chat(model: LlamaModel, contextSize = 512): Promise<LlamaChatSession> {
  const context = await model.createContext({ contextSize, threads: THREADS });
  return new LlamaChatSession({
    contextSequence: context.getSequence(),
    chatWrapper: chatWrapperOf(model),
    autoDisposeSequence: true,
  });
}

const tensor = (name: string, shape: number[], type: GgmlType, values: Float32Array): GgufTensor =>
  ({ name, shape, type, data: () => [values] });

describe("gguf writer", () => {
  test("round trips metadata and tensor infos through node-llama-cpp's reader", async () => {
    const path = join(dir, "roundtrip.gguf");
    const f32 = Float32Array.from({ length: 64 * 2 }, (_, i) => i / 7 - 3);
    const f16 = Float32Array.from({ length: 32 * 3 }, (_, i) => Math.sin(i) * 100);
    const q8 = Float32Array.from({ length: 64 * 2 }, (_, i) => Math.cos(i) * (i % 32 === 0 ? 0 : 3));
    const written = await writeGguf(path, {
      metadata: {
        "general.architecture": gguf.str("llama"),
        "test.u32": gguf.u32(4_000_000_000),
        "test.i32": gguf.i32(-123),
        "test.f32": gguf.f32(0.25),
        "test.bool": gguf.bool(true),
        "test.str": gguf.str("héllo ▁ ✓"),
        "test.strs": gguf.strs(["a", "", "<0x0A>"]),
        "test.f32s": gguf.f32s([1.5, -2]),
        "test.i32s": gguf.i32s([-1, 2]),
        "test.u32s": gguf.u32s([7, 4_000_000_000]),
      },
      tensors: [
        tensor("a.f32", [64, 2], GgmlType.F32, f32),
        tensor("b.f16", [32, 3], GgmlType.F16, f16),
        tensor("c.q8", [64, 2], GgmlType.Q8_0, q8),
      ],
    });
    const info = await readGgufFileInfo(path, { logWarnings: false });
    assert.equal(info.version, 3);
    assert.equal(Number(info.tensorCount), 3);
    const m = info.metadata as unknown as Record<string, Record<string, unknown>>;
    assert.equal(m["general"]!["alignment"], 32);
    assert.deepEqual(m["test"], {
      u32: 4_000_000_000, i32: -123, f32: 0.25, bool: true, str: "héllo ▁ ✓", strs: ["a", "", "<0x0A>"],
      f32s: [1.5, -2], i32s: [-1, 2], u32s: [7, 4_000_000_000],
    });
    const tensors = info.fullTensorInfo ?? [];
    assert.deepEqual(tensors.map((t) => [t.name, t.dimensions.map(Number), t.ggmlType]), [
      ["a.f32", [64, 2], GgmlType.F32], ["b.f16", [32, 3], GgmlType.F16], ["c.q8", [64, 2], GgmlType.Q8_0],
    ]);
    for (const t of tensors) assert.equal(Number(t.fileOffset) % 32, 0, `${t.name} aligned`);
    assert.equal(info.infoEndOffset, written.dataOffset);

    const bytes = await readFile(path);
    assert.equal(bytes.length, written.bytes);
    const at = (name: string): number => Number(tensors.find((t) => t.name === name)!.fileOffset);
    f32.forEach((v, i) => assert.equal(bytes.readFloatLE(at("a.f32") + i * 4), Math.fround(v)));
    f16.forEach((v, i) => assert.equal(bytes.readUInt16LE(at("b.f16") + i * 2), f32ToF16Bits(v)));
    assert.equal(bytes.length, at("c.q8") + (q8.length / 32) * 34);
    for (let b = 0; b < q8.length / 32; b++) {
      const base = at("c.q8") + b * 34;
      const d = f16BitsToF32(bytes.readUInt16LE(base));
      for (let j = 0; j < 32; j++) {
        const err = Math.abs(bytes.readInt8(base + 2 + j) * d - q8[b * 32 + j]!);
        assert.ok(err <= d / 2 + 1e-3, `q8 block ${b} value ${j} off by ${err}`);
      }
    }
  });

  test("encodes f16 like IEEE binary16 (round to nearest even, subnormals, overflow)", () => {
    const cases: [number, number][] = [
      [0, 0x0000], [-0, 0x8000], [1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [65520, 0x7c00],
      [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [2 ** -24, 0x0001], [2 ** -26, 0x0000],
      [Infinity, 0x7c00], [-Infinity, 0xfc00],
    ];
    for (const [value, bits] of cases) assert.equal(f32ToF16Bits(value), bits, `f16(${value})`);
    assert.ok(Number.isNaN(f16BitsToF32(f32ToF16Bits(NaN))));
  });

  test("rejects malformed tensors and duplicate vocab entries", async () => {
    const path = join(dir, "bad.gguf");
    const meta = { "general.architecture": gguf.str("llama") };
    const ones = (n: number): Float32Array => new Float32Array(n).fill(1);
    await assert.rejects(writeGguf(path, { metadata: meta, tensors: [tensor("x", [4], GgmlType.F32, ones(3))] }), /expected 4/);
    await assert.rejects(writeGguf(path, { metadata: meta, tensors: [tensor("x", [48], GgmlType.Q8_0, ones(48))] }), /block size/);
    await assert.rejects(
      writeGguf(path, { metadata: meta, tensors: [tensor("x", [1], GgmlType.F32, ones(1)), tensor("x", [1], GgmlType.F32, ones(1))] }),
      /duplicate tensor/,
    );
    const vocab = new SpmVocabBuilder();
    vocab.add("a");
    assert.throws(() => vocab.add("a"), /duplicate token/);
  });
});

describe("fixture cache", () => {
  test("writes once, atomically, to a path keyed by kind and options", async () => {
    const settings = { dir: join(dir, "cache") };
    const [a, b] = await Promise.all([ensureFixture("demo", {}, settings), ensureFixture("demo", {}, settings)]);
    assert.equal(a, b);
    assert.equal(a, fixturePath("demo", {}, settings));
    const first = await stat(a);
    assert.equal(await ensureFixture("demo", {}, settings), a);
    assert.equal((await stat(a)).mtimeMs, first.mtimeMs);
    assert.notEqual(fixturePath("demo", { toolMode: true }, settings), a);
    assert.equal(fixturePath("tiny", { seed: 1 }, settings), fixturePath("tiny", { seed: 1 }, settings));
    assert.notEqual(fixturePath("tiny", { seed: 1 }, settings), fixturePath("tiny", { seed: 2 }, settings));
    assert.deepEqual((await readdir(settings.dir)).filter((f) => f.endsWith(".tmp")), []);
  });
});

describe("tiny model", () => {
  test("loads, and greedy generation is deterministic valid text", async () => {
    const settings = { dir: join(dir, "cache") };
    const path = await ensureFixture("tiny", { seed: 7 }, settings);
    const info = await readGgufFileInfo(path, { logWarnings: false });
    assert.equal(info.metadata.general.architecture, "llama");
    assert.equal(info.metadata.tokenizer.ggml.model, "llama");
    assert.ok((await stat(path)).size < 1_000_000, "a few hundred KB");
    const model = await load(path);
    const { vocab } = tinyVocab();
    const runs: { text: string; tokens: Token[] }[] = [];
    for (let i = 0; i < 2; i++) {
      const session = await chat(model);
      const tokens: Token[] = [];
      const text = await session.prompt("Hello world, what is a llama?", {
        maxTokens: 32, temperature: 0, onToken: (t) => tokens.push(...t),
      });
      session.dispose();
      runs.push({ text, tokens });
    }
    assert.equal(runs[0]!.tokens.length, 32);
    assert.deepEqual(runs[1], runs[0]);
    for (const token of runs[0]!.tokens) assert.equal(vocab.types[token], TokenType.Normal, `token ${token} is normal text`);
    assert.ok(!runs[0]!.text.includes("\uFFFD"));
    assert.equal(Buffer.from(runs[0]!.text, "utf8").toString("utf8"), runs[0]!.text);
    assert.ok(new Set(runs[0]!.tokens).size > 5, "generation is not one repeated token");
  });
});

describe("demo model", () => {
  for (const temperature of [0, 1]) {
    test(`replies exactly DEMO_SENTENCE at temperature ${temperature}`, async () => {
      const model = await load(await ensureFixture("demo", {}, { dir: join(dir, "cache") }));
      const session = await chat(model);
      assert.equal(await session.prompt("Who are you?", { temperature, maxTokens: 40 }), DEMO_SENTENCE);
      assert.equal(await session.prompt("Say it again.", { temperature, maxTokens: 40 }), DEMO_SENTENCE);
      session.dispose();
    });
  }

  test("tool mode: calls echo({text: 'hi'}) on /echo, then answers DEMO_SENTENCE", async () => {
    const model = await load(await ensureFixture("demo", { toolMode: true }, { dir: join(dir, "cache") }));
    const callPrefix = chatWrapperOf(model).settings.functions.call.prefix;
    assert.match(JSON.stringify(callPrefix), /<tool_call>/, "the chat wrapper picked from the template does function calls");
    const calls: unknown[] = [];
    const functions = {
      echo: defineChatSessionFunction({
        description: "Echo the text back",
        params: { type: "object", properties: { message: { type: "string" } } },
        handler: (params) => {
          calls.push(params);
          return params.message;
        },
      }),
    };
    for (const temperature of [0, 1]) {
      calls.length = 0;
      // The demo vocab spells prompts byte by byte, and the tool prompt is ~700 bytes.
      const session = await chat(model, 2048);
      assert.equal(await session.prompt(`${DEMO_TOOL_TRIGGER} hi`, { functions, temperature, maxTokens: 80 }), DEMO_SENTENCE);
      assert.deepEqual(calls, [{ message: "hi" }]);
      assert.equal(await session.prompt("Thanks. Who are you?", { functions, temperature, maxTokens: 80 }), DEMO_SENTENCE);
      assert.equal(calls.length, 1, "no call without the trigger");
      assert.equal(await session.prompt(`${DEMO_TOOL_TRIGGER} again`, { functions, temperature, maxTokens: 80 }), DEMO_SENTENCE);
      assert.deepEqual(calls, [{ message: "hi" }, { message: "hi" }], "a later /echo calls again");
      session.dispose();
    }
    // Without functions the raw reply is the call text an OpenAI-style server would parse.
    const raw = await chat(model, 1024);
    assert.equal(await raw.prompt(`${DEMO_TOOL_TRIGGER} hi`, { maxTokens: 80 }), DEMO_TOOL_CALL_TEXT);
    raw.dispose();
  });
});
