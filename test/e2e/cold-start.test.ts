import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";

/** Dependencies that only chat, warm_up, doctor, plan or another command need: never before the first ping. */
const HEAVY = ["@modelcontextprotocol/sdk", "openai", "execa", "node-llama-cpp", "hono", "minisearch"];
const HOOK = new URL("../helpers/module-log-hook.js", import.meta.url).href;

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
});
