// Models on demand, the logic: which request names find a file in models_dir (DownloadedModels, on
// a real folder), and where a downloaded model sits in the resolver's order (resolveServedModel
// with a ModelAccess built on it). The served path end to end is test/e2e/models-on-demand.test.ts.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { configSchema, type Config } from "../../src/config/schema.js";
import type { ModelAccess } from "../../src/http/http-deps.js";
import { toOpenAiError } from "../../src/http/http-error.js";
import { ModelResolver } from "../../src/http/resolve-model.js";
import { resolveServedModel } from "../../src/http/turn/resolve-served-model.js";
import { DownloadedModels } from "../../src/models/downloaded-models.js";

describe("DownloadedModels and resolveServedModel", () => {
  let dir = "";
  let modelsDir = "";

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "downloaded-models-"));
    modelsDir = path.join(dir, "models");
    await mkdir(path.join(modelsDir, "sub.gguf"), { recursive: true });
    for (const name of ["alpha.gguf", "beta.Q4_K_M.gguf", "used.gguf", "split-00001-of-00002.gguf", "split-00002-of-00002.gguf", "notes.txt", "partial.gguf.ipull"]) {
      await writeFile(path.join(modelsDir, name), "x");
    }
    await writeFile(path.join(dir, "outside.gguf"), "x");
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const table = (): Config =>
    configSchema.parse({
      app: { data_dir: dir, models_dir: modelsDir },
      llama: { models: { chat: { path: path.join(modelsDir, "used.gguf") } } },
      agents: { assistant: { model: "chat" } },
    });
  const downloaded = (config: Config, served = true): DownloadedModels => new DownloadedModels(config, { modelsDir, env: {} }, served);

  it("finds a file by its name with or without .gguf; never a folder, a path, a partial download or a later split part", async () => {
    const models = downloaded(table());
    assert.deepEqual(await models.find("alpha"), { name: "alpha.gguf", path: path.join(modelsDir, "alpha.gguf"), configured: false });
    assert.equal((await models.find("alpha.gguf"))?.name, "alpha.gguf");
    assert.equal((await models.find("beta.Q4_K_M"))?.name, "beta.Q4_K_M.gguf");
    assert.equal((await models.find("split-00001-of-00002"))?.name, "split-00001-of-00002.gguf");
    for (const name of ["sub", "sub.gguf", "../outside", "../outside.gguf", "./alpha", ".", "", "split-00002-of-00002", "partial", "notes.txt", "missing"]) {
      assert.equal(await models.find(name), null, name);
    }
  });

  it("a file a config entry uses is that entry; adopting adds an entry with the defaults to the runtime's table, once", async () => {
    const config = table();
    const models = downloaded(config);
    assert.deepEqual(await models.find("used"), { name: "chat", path: path.join(modelsDir, "used.gguf"), configured: true });
    const alpha = await models.find("alpha");
    assert.ok(alpha !== null);
    assert.equal(models.adopt(alpha), "alpha.gguf");
    const entry = config.llama.models["alpha.gguf"];
    assert.deepEqual([entry?.engine, entry?.path, entry?.ctx_size, entry?.parallel, entry?.gpu_layers], ["embedded", path.join(modelsDir, "alpha.gguf"), 4096, 2, "auto"]);
    // Named again (now that an entry of its name exists), it is still the downloaded file, not a configured one.
    assert.deepEqual(await models.find("alpha.gguf"), { name: "alpha.gguf", path: path.join(modelsDir, "alpha.gguf"), configured: false });
    assert.deepEqual(await models.list(), ["alpha.gguf", "beta.Q4_K_M.gguf", "split-00001-of-00002.gguf"], "the configured file is not listed; every other whole GGUF is");
    assert.deepEqual(Object.keys(config.llama.models), ["chat", "alpha.gguf", "beta.Q4_K_M.gguf", "split-00001-of-00002.gguf"]);
    assert.deepEqual(await downloaded(table(), false).list(), [], "nothing is listed while not served");
  });

  it("the resolver's order: agents and aliases first, then a downloaded model (on the default agent), then http.unknown_model", async () => {
    const config = table();
    const access = (served: boolean): ModelAccess => {
      const source = downloaded(config, served);
      return {
        names: ["chat"],
        engine: () => Promise.reject(new Error("not used")),
        describe: () => {
          throw new Error("not used");
        },
        ps: () => Promise.reject(new Error("not used")),
        onDemand: async (requested) => {
          const found = await source.find(requested);
          if (found === null) return null;
          if (!found.configured && !served) return { served: false, file: found.path };
          return { served: true, name: source.adopt(found) };
        },
        downloaded: () => source.list(),
      };
    };
    const resolver = new ModelResolver({ agents: { assistant: "chat" }, aliases: { "alph*": "assistant" } });
    assert.deepEqual(await resolveServedModel(resolver, access(true), "alpha"), { id: "alpha", agent: "assistant", modelName: "chat" }, "a glob alias goes before a file");
    const plain = new ModelResolver({ agents: { assistant: "chat" } });
    assert.deepEqual(await resolveServedModel(plain, access(true), "beta.Q4_K_M"), { id: "beta.Q4_K_M", agent: "assistant", modelName: "beta.Q4_K_M.gguf", downloaded: true });
    const fallback = new ModelResolver({ agents: { assistant: "chat" }, unknownModel: "default" });
    assert.equal((await resolveServedModel(fallback, access(true), "alpha")).modelName, "alpha.gguf", "before http.unknown_model: default");
    assert.equal((await resolveServedModel(fallback, access(true), "nothing")).fallback, true);

    const refused = async (requested: string, source: ModelAccess): Promise<string> => {
      const error = await resolveServedModel(plain, source, requested).then(() => null, (caught: unknown) => caught);
      const { status, body } = toOpenAiError(error);
      assert.deepEqual([status, body.error.code, body.error.param], [404, "model_not_found", "model"]);
      return body.error.message;
    };
    assert.equal(await refused("nothing", access(true)), 'The model "nothing" does not exist. Available: assistant, alpha.gguf, beta.Q4_K_M.gguf, split-00001-of-00002.gguf');
    assert.equal(
      await refused("alpha", access(false)),
      `The model "alpha" is a downloaded model (${path.join(modelsDir, "alpha.gguf")}) but llama.serve_downloaded is false, so only configured models are served. Available: assistant`,
    );
  });

  it("a 404 names at most 20 models, then how many more", () => {
    const agents = Object.fromEntries(Array.from({ length: 25 }, (_, index) => [`agent${index}`, "m"]));
    const error = new ModelResolver({ agents }).notFound("x", [], ["file.gguf"]);
    assert.match(error.message, /Available: agent0, agent1, .*agent19 and 6 more \(GET \/v1\/models lists them\)$/);
    assert.ok(!error.message.includes("agent20"));
  });
});
