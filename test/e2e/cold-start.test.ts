import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

/** Dependencies that only chat, warm_up, doctor, plan or another command need: never before the first ping. */
const HEAVY = ["@modelcontextprotocol/sdk", "openai", "execa", "node-llama-cpp", "hono", "minisearch"];
const HOOK = new URL("../helpers/module-log-hook.js", import.meta.url).href;

/** Our engine implementations, each imported by its driver with its first model (src/engine/drivers/). */
const ENGINE_MODULES = ["embedded/embedded-engine.js", "llama-server/llama-server-engine.js", "openai/openai-engine.js"];

function packagesIn(urls: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const url of urls) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match) names.add(match[1]!);
  }
  return names;
}

describe("cold start: serve-stdio imports only what ping needs", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "cold-start-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const withConfig of [false, true]) {
    it(`answers the first ping without loading ${HEAVY.join(", ")} (${withConfig ? "valid config" : "no config"})`, async () => {
      const log = path.join(dir, `modules-${String(withConfig)}.txt`);
      const args = ["serve-stdio"];
      if (withConfig) {
        const config = path.join(dir, "config.yaml");
        await writeFile(config, `app:\n  data_dir: ${JSON.stringify(path.join(dir, "data"))}\nllama:\n  models:\n    default:\n      path: ./model.gguf\n`);
        args.push("--config", config);
      }
      const proc = new CliProcess(args, { cwd: dir, env: { NODE_OPTIONS: `--import=${HOOK}`, LOCAL_AI_TEST_MODULE_LOG: log, LOCAL_AI_CONFIG: "" } });
      const answer = await proc.request({ id: 1, method: "ping" });
      assert.deepEqual(answer, { id: 1, type: "result", result: { status: "ok" } });
      // Read at the answer: the loader wrote every URL before handing its module over.
      const urls = (await readFile(log, "utf8")).split("\n").filter((line) => line !== "");
      const loaded = packagesIn(urls);
      assert.ok(loaded.has("commander"), `the hook saw the CLI's imports: ${[...loaded].join(", ")}`);
      assert.deepEqual(HEAVY.filter((name) => loaded.has(name)), [], `loaded before the first ping: ${[...loaded].join(", ")}`);
      // Without a config file there is nothing to parse or validate: no yaml, no zod at all (with
      // one, the parse runs in the background and may or may not have started by the answer).
      if (!withConfig) assert.deepEqual(["yaml", "zod"].filter((name) => loaded.has(name)), [], `loaded before the first ping: ${[...loaded].join(", ")}`);
      proc.endInput();
      assert.equal((await proc.exited).code, 0);
    });
  }

  it("a chat on an embedded model imports neither the openai client nor the other engines", async () => {
    const demo = await ensureFixture("demo");
    const log = path.join(dir, "modules-chat.txt");
    const config = path.join(dir, "config-chat.yaml");
    await writeFile(config, `app:\n  data_dir: ${JSON.stringify(path.join(dir, "data-chat"))}\nllama:\n  models:\n    default:\n      path: ${JSON.stringify(demo)}\n      threads: 1\n      ctx_size: 512\nagents:\n  assistant:\n    temperature: 0\n`);
    const proc = new CliProcess(["serve-stdio", "--config", config], { cwd: dir, env: { NODE_OPTIONS: `--import=${HOOK}`, LOCAL_AI_TEST_MODULE_LOG: log } });
    const doctor = await proc.request({ id: 1, method: "doctor" }, 60_000);
    assert.equal(doctor.type, "result", JSON.stringify(doctor));
    const afterDoctor = (await readFile(log, "utf8")).split("\n");
    assert.deepEqual(ENGINE_MODULES.filter((module) => afterDoctor.some((url) => url.endsWith(`/src/engine/${module}`))), [], "doctor creates no engine");
    assert.equal(packagesIn(afterDoctor).has("openai"), false, "doctor does not load the openai client");
    const chat = await proc.request({ id: 2, method: "chat", params: { input: "Hi" } }, 60_000);
    assert.equal((chat.result as { response?: string } | undefined)?.response, DEMO_SENTENCE, JSON.stringify(chat));
    const urls = (await readFile(log, "utf8")).split("\n").filter((line) => line !== "");
    const engines = ENGINE_MODULES.filter((module) => urls.some((url) => url.endsWith(`/src/engine/${module}`)));
    assert.deepEqual(engines, ["embedded/embedded-engine.js"]);
    const loaded = packagesIn(urls);
    assert.ok(loaded.has("node-llama-cpp"), "the embedded engine ran");
    assert.equal(loaded.has("openai"), false, `loaded: ${[...loaded].join(", ")}`);
    proc.send({ id: 3, method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });
});
