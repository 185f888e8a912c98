// Models on demand on the built CLI's serve-http (real embedded engine, generated GGUF files):
// a GGUF in app.models_dir with no config entry answers by its file name (with or without .gguf)
// and by the hf: reference it was pulled from, through the official openai client; GET /v1/models
// lists it; a name nothing serves is a 404 in each dialect's error shape naming what exists;
// llama.serve_downloaded: false refuses it; keep_alive: 0 on a Messages request unloads after it.
import assert from "node:assert/strict";
import { copyFile, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { CliProcess } from "../helpers/cli-process.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { tempConfig } from "../helpers/temp-config.js";

const HF_FILE = "hf_owner_Tiny.Q8_0.gguf";

interface ModelEntry {
  id: string;
  status?: string;
  memory?: { ram_bytes: number; vram_bytes: number; measured: boolean };
  in_flight?: number;
}

describe("models on demand (serve-http, built CLI, embedded engine)", () => {
  let tiny = "";
  const servers: HttpServer[] = [];

  /** A configured model and agent; two files in models_dir that no entry uses (one under the name `pull hf:owner/Tiny-GGUF:Q8_0` gives it). */
  const start = async (llama: Record<string, unknown> = {}): Promise<HttpServer> => {
    const yaml = configYaml({
      llama: { ...llama, models: { default: localModel(tiny, { ctx_size: 1024, parallel: 1, gpu_layers: 0 }) } },
      agents: { default: { model: "default", temperature: 0, max_tokens: 4, memory: false } },
    }).replace(/^app:\n(?: {2}.*\n)+/, "");
    const server = await startHttpServer(yaml, [], { LOCAL_AI_LOG_LEVEL: "info" }, async (dir) => {
      const models = path.join(dir, "data", "models");
      await mkdir(models, { recursive: true });
      await Promise.all([copyFile(tiny, path.join(models, "pulled-tiny.gguf")), copyFile(tiny, path.join(models, HF_FILE))]);
    });
    servers.push(server);
    return server;
  };
  const client = (server: HttpServer): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0 });
  const ps = async (server: HttpServer): Promise<ModelEntry[]> => ((await (await fetch(`${server.base}/v1/ps`)).json()) as { data: ModelEntry[] }).data;

  before(async () => {
    tiny = await ensureFixture("tiny", { seed: 3 });
  });
  after(async () => {
    for (const server of servers) {
      await server.stop();
      await rm(server.dir, { recursive: true, force: true });
    }
  });

  it("answers a chat by the file name (with or without .gguf) and by the hf: reference; /v1/models lists the downloaded models with status and memory", async () => {
    const server = await start();
    const openai = client(server);
    const byName = await openai.chat.completions.create({ model: "pulled-tiny", messages: [{ role: "user", content: "hello" }] });
    assert.equal(byName.model, "pulled-tiny", "the name the client sent is echoed");
    assert.equal(byName.object, "chat.completion");
    assert.ok((byName.usage?.completion_tokens ?? 0) > 0, JSON.stringify(byName));
    const byFile = await openai.chat.completions.create({ model: "pulled-tiny.gguf", messages: [{ role: "user", content: "hello" }] });
    assert.equal(byFile.model, "pulled-tiny.gguf");
    const byRef = await openai.chat.completions.create({ model: "hf:owner/Tiny-GGUF:Q8_0", messages: [{ role: "user", content: "hello" }] });
    assert.equal(byRef.model, "hf:owner/Tiny-GGUF:Q8_0");

    // Both names of the first file are one model (loaded once); the reference found the other file.
    // `default` is the default agent's model, loaded by serve-http's eager warm-up.
    const loaded = await ps(server);
    assert.deepEqual(loaded.map((entry) => entry.id), ["default", "pulled-tiny.gguf", HF_FILE], JSON.stringify(loaded));

    const listed = (await openai.models.list()).data as unknown as ModelEntry[];
    assert.deepEqual(listed.map((entry) => entry.id), ["default", HF_FILE, "pulled-tiny.gguf"]);
    const pulled = listed.find((entry) => entry.id === "pulled-tiny.gguf");
    assert.equal(pulled?.status, "loaded");
    assert.ok(pulled?.memory !== undefined && pulled.memory.ram_bytes > 0 && pulled.memory.measured, JSON.stringify(pulled));
    assert.equal(listed.find((entry) => entry.id === HF_FILE)?.status, "loaded");

    // Embeddings and completions name models directly: a downloaded one too.
    const completion = await openai.completions.create({ model: "pulled-tiny", prompt: "Once", max_tokens: 2 });
    assert.equal(completion.model, "pulled-tiny");
  });

  it("a name nothing serves is a 404 in each dialect's shape, naming the configured and downloaded models", async () => {
    const server = await start();
    const openai = client(server);
    const names = /Available: default, hf_owner_Tiny\.Q8_0\.gguf, pulled-tiny\.gguf/;
    await assert.rejects(openai.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.equal(error.status, 404);
      assert.equal(error.code, "model_not_found");
      assert.equal(error.param, "model");
      assert.match(error.message, /The model "no-such-model" does not exist\./);
      assert.match(error.message, names);
      return true;
    });
    await assert.rejects(openai.embeddings.create({ model: "no-such-model", input: "x" }), (error: unknown) => error instanceof OpenAI.NotFoundError && names.test(error.message));
    await assert.rejects(openai.responses.create({ model: "no-such-model", input: "hi" }), (error: unknown) => error instanceof OpenAI.NotFoundError && names.test(error.message));
    const messages = await fetch(`${server.base}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "no-such-model", max_tokens: 4, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(messages.status, 404);
    const body = (await messages.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, "error");
    assert.equal(body.error.type, "not_found_error");
    assert.match(body.error.message, names);
    // A path is never a model name: nothing outside models_dir is reached.
    await assert.rejects(openai.chat.completions.create({ model: "../data/models/pulled-tiny", messages: [{ role: "user", content: "hi" }] }), (error: unknown) => error instanceof OpenAI.NotFoundError);
    assert.deepEqual((await ps(server)).map((entry) => entry.id), ["default"], "nothing was loaded (but the eager warm-up's model)");
  });

  it("llama.serve_downloaded: false serves configured models only, and says why a downloaded one is refused", async () => {
    const server = await start({ serve_downloaded: false });
    const openai = client(server);
    await assert.rejects(openai.chat.completions.create({ model: "pulled-tiny", messages: [{ role: "user", content: "hi" }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.match(error.message, /^404 The model "pulled-tiny" is a downloaded model \(.*pulled-tiny\.gguf\) but llama\.serve_downloaded is false, so only configured models are served\. Available: default$/);
      return true;
    });
    const listed = (await openai.models.list()).data.map((entry) => entry.id);
    assert.deepEqual(listed, ["default"]);
  });

  it("keep_alive: 0 on a Messages request unloads its model once the request is done (GET /v1/ps)", async () => {
    const server = await start();
    const send = (keepAlive?: number): Promise<Response> =>
      fetch(`${server.base}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: "pulled-tiny", max_tokens: 4, messages: [{ role: "user", content: "hi" }], ...(keepAlive === undefined ? {} : { keep_alive: keepAlive }) }),
      });
    const first = await send();
    assert.equal(first.status, 200, await first.clone().text());
    const warnings = ((await first.json()) as { local_ai?: { warnings?: string[] } }).local_ai?.warnings ?? [];
    assert.ok(!warnings.some((warning) => warning.startsWith("keep_alive")), "keep_alive is a field the server reads");
    assert.deepEqual((await ps(server)).map((entry) => entry.id), ["default", "pulled-tiny.gguf"], "loaded, and kept without keep_alive");
    const unloaded = server.proc.waitForStderr(/"model":"pulled-tiny\.gguf".*"reason":"idle for 0 s \(keep_alive\)".*"msg":"model unloaded"|"msg":"model unloaded".*"reason":"idle for 0 s \(keep_alive\)"/, 30_000);
    const second = await send(0);
    assert.equal(second.status, 200, await second.clone().text());
    await unloaded;
    assert.deepEqual((await ps(server)).map((entry) => entry.id), ["default"], "unloaded after the request");
  });

  it("over stdio with serve_downloaded: true, unload takes a downloaded model's names and its unknown-model error lists them", async () => {
    const { dir, configPath } = await tempConfig(
      configYaml({ llama: { serve_downloaded: true, models: { default: localModel(tiny, { ctx_size: 1024, parallel: 1, gpu_layers: 0 }) } }, agents: { default: { model: "default", memory: false } } }),
    );
    await mkdir(path.join(dir, "data", "models"), { recursive: true });
    await copyFile(tiny, path.join(dir, "data", "models", "pulled-tiny.gguf"));
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    try {
      const unknown = await proc.request({ id: "u1", method: "unload", params: { model: "nope" } }, 30_000);
      assert.equal(unknown.type, "error");
      assert.equal(unknown.code, "invalid_request", JSON.stringify(unknown));
      assert.equal(unknown.message, 'Unknown model "nope"; configured models: default, pulled-tiny.gguf');
      const named = await proc.request({ id: "u2", method: "unload", params: { model: "pulled-tiny" } }, 30_000);
      assert.deepEqual(named.result, { unloaded: [] }, "named by file name; nothing was loaded");
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
