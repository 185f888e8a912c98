// The engine driver table (src/engine/drivers/): one driver per kind the config accepts, and the
// per-kind facts the scheduler, plan, doctor and serve-http's port check read from it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { modelSchema } from "../../src/config/schema.js";
import { describeModel } from "../../src/engine/describe-model.js";
import { driverOf, ENGINE_DRIVERS } from "../../src/engine/drivers/engine-drivers.js";
import { isRuntimeError } from "../../src/shared/runtime-error.js";

const model = (fields: Record<string, unknown>) => modelSchema.parse({ path: "/m.gguf", base_url: "http://127.0.0.1:9/v1", ...fields });

describe("engine drivers", () => {
  it("has exactly one driver for each engine the config accepts, under its own kind", () => {
    assert.deepEqual(Object.keys(ENGINE_DRIVERS).sort(), [...modelSchema.shape.engine.unwrap().options].sort());
    for (const [kind, driver] of Object.entries(ENGINE_DRIVERS)) assert.equal(driver.kind, kind);
  });

  it("an unknown kind is config_invalid, as createEngine answered it", () => {
    assert.throws(
      () => driverOf("ollama" as never),
      (error: unknown) => isRuntimeError(error) && error.code === "config_invalid" && error.message === "Unknown engine ollama",
    );
  });

  it("local weights: embedded and llama-server are planned here (context per sequence vs shared); openai is not", () => {
    assert.deepEqual(
      Object.values(ENGINE_DRIVERS).map((driver) => [driver.kind, driver.local?.context ?? null, driver.local?.launchesServer ?? null, driver.local?.threads.cores ?? null]),
      [
        ["embedded", "per_sequence", false, "math"],
        ["llama-server", "shared", true, "physical"],
        ["openai", null, null, null],
      ],
    );
    assert.deepEqual([0, 1, 2, 8].map((cores) => driverOf("embedded").local?.threads.auto(cores)), [1, 1, 1, 7]);
    assert.deepEqual([1, 2, 8].map((cores) => driverOf("llama-server").local?.threads.auto(cores)), [1, 2, 8]);
  });

  it("ports: only a llama-server model listens, on loopback at its configured port", () => {
    assert.deepEqual(driverOf("llama-server").ports("coder", model({ engine: "llama-server", port: 8099 })), [
      { host: "127.0.0.1", port: 8099, key: "llama.models.coder.port", owner: "the llama-server of model coder" },
    ]);
    assert.deepEqual(driverOf("embedded").ports("chat", model({ engine: "embedded", port: 8099 })), []);
    assert.deepEqual(driverOf("openai").ports("remote", model({ engine: "openai", port: 8099 })), []);
  });

  it("doctor checks per kind: the file and plan for local weights, the endpoint for openai, each binary for its kind", () => {
    assert.deepEqual(
      Object.fromEntries(Object.values(ENGINE_DRIVERS).map((driver) => [driver.kind, [...driver.doctorChecks]])),
      {
        embedded: ["model_file", "model_plan", "embedded_binary"],
        "llama-server": ["model_file", "model_plan", "llama_server_binary", "llama_server_processes"],
        openai: ["model_endpoint"],
      },
    );
  });

  it("capabilities from the config alone: llama-server's embeddings and vision follow its extra_args", () => {
    assert.deepEqual(describeModel(model({ engine: "embedded" })).capabilities, { tools: true, embeddings: true, vision: false, rerank: true });
    assert.deepEqual(describeModel(model({ engine: "openai" })).capabilities, { tools: true, embeddings: true, vision: true, rerank: true });
    assert.deepEqual(describeModel(model({ engine: "llama-server" })).capabilities, { tools: true, embeddings: false, vision: false, rerank: false });
    assert.deepEqual(describeModel(model({ engine: "llama-server", extra_args: ["--embedding", "--mmproj", "p.gguf"] })).capabilities, { tools: true, embeddings: true, vision: true, rerank: false });
    assert.deepEqual(describeModel(model({ engine: "llama-server", extra_args: ["-mm", "p.gguf"] })), {
      engine: "llama-server",
      contextLength: 4096,
      capabilities: { tools: true, embeddings: false, vision: true, rerank: false },
    });
  });
});
