import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getLlama, LlamaLogLevel, type LlamaModel } from "node-llama-cpp";
import { LocalAiClient, LocalAiError } from "../../src/client/index.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { tempConfig } from "../helpers/temp-config.js";
import { WireTap } from "../helpers/wire-recorder.js";

/**
 * The stdio `tokenize` / `detokenize` methods through the host client on the built CLI (every line
 * checked against schema/ by the wire tap): the tokens and text of node-llama-cpp's own tokenizer
 * on the same GGUF.
 */

const TEXTS = ["hello world", "The cat ran to the river, slowly.", "<|im_start|>user a tiny model<|im_end|>"];

let local: LocalAiClient;
let own: LlamaModel;

before(async () => {
  const [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  const { configPath } = await tempConfig(agentsYaml(demo, tiny));
  local = new LocalAiClient({ config: configPath, env: { LOCAL_AI_LOG_LEVEL: "warn" }, trace: new WireTap("v1", "LocalAiClient").trace });
  const llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.warn });
  own = await llama.loadModel({ modelPath: tiny, gpuLayers: 0 });
});

after(async () => {
  await local?.close();
  await own?.dispose();
});

describe("stdio tokenize / detokenize (LocalAiClient, built CLI)", () => {
  it("round trip: node-llama-cpp's tokens (special-token text parsed), and its text back", async () => {
    for (const content of TEXTS) {
      const { tokens } = await local.tokenize({ model: "tiny", content });
      assert.deepEqual(tokens, [...own.tokenize(content, true)], content);
      assert.deepEqual(await local.detokenize({ model: "tiny", tokens }), { content: own.detokenize(tokens, true) });
    }
    const withBos = await local.tokenize({ model: "tiny", content: "hello world", add_special: true, with_pieces: true });
    assert.equal(withBos.tokens[0], own.tokens.bos);
    assert.equal(withBos.pieces?.length, withBos.tokens.length);
    assert.equal(withBos.pieces?.slice(1).join("").trim(), "hello world");
  });

  it("an unknown model is refused and names the known ones", async () => {
    await assert.rejects(local.tokenize({ model: "nope", content: "x" }), (error: unknown) => {
      assert.ok(error instanceof LocalAiError);
      assert.equal(error.code, "invalid_request");
      assert.match(error.message, /Unknown model "nope"; known models: default, tiny/);
      return true;
    });
  });
});
