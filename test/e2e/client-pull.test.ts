// LocalAiClient.pull and .unload against the built CLI, with a model served by a loopback server.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFile, rm, stat } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { LocalAiClient, LocalAiError, type PullProgress } from "../../src/client/index.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { fileSource, ModelFileServer } from "../helpers/model-file-server.js";
import { tempConfig } from "../helpers/temp-config.js";
import { WireTap } from "../helpers/wire-recorder.js";

describe("LocalAiClient.pull / unload on the built CLI", () => {
  let server: ModelFileServer;
  let tiny = "";
  let url = "";
  let dir = "";
  let client: LocalAiClient;

  before(async () => {
    tiny = await ensureFixture("tiny");
    server = await ModelFileServer.start();
    url = server.serve("/files/client/tiny.gguf", fileSource(tiny, (await stat(tiny)).size));
    const made = await tempConfig("  models_dir: ./models\n");
    dir = made.dir;
    // HF_HOME: no token file of the developer's is read.
    client = new LocalAiClient({ config: made.configPath, env: { LOCAL_AI_LOG_LEVEL: "warn", HF_HOME: dir }, trace: new WireTap("v1", "LocalAiClient").trace });
    await client.start();
  });
  after(async () => {
    await client.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("pull reports progress and resolves {path, bytes} with the whole file", async () => {
    const progress: PullProgress[] = [];
    const result = await client.pull(url, { onProgress: (p) => progress.push(p) });
    const size = (await stat(tiny)).size;
    assert.equal(result.bytes, size);
    const sha = async (file: string): Promise<string> => createHash("sha256").update(await readFile(file)).digest("hex");
    assert.equal(await sha(result.path), await sha(tiny));
    assert.ok(progress.length > 0, "at least the final progress event");
    assert.deepEqual(progress.at(-1), { downloaded_bytes: size, total_bytes: size });
  });

  it("unload answers the models that were loaded (none here); an unknown model is a LocalAiError", async () => {
    assert.deepEqual(await client.unload(), { unloaded: [] });
    await assert.rejects(client.unload({ model: "nope" }), (error: unknown) => error instanceof LocalAiError && error.code === "invalid_request");
  });
});
