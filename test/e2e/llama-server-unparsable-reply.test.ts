// A reply that llama-server streams but cannot parse into its chat format at the end (here: the
// bench model at temperature 0 writes invalid UTF-8, and llama.cpp's end-of-reply parser fails
// with "does not match the expected peg-native format"). The streamed text is kept as the
// answer and the turn succeeds; before, the whole turn failed with engine_error. Real binary,
// through the built CLI.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { findLlamaServerBinary } from "../helpers/llama-server-binary.js";
import { tempConfig } from "../helpers/temp-config.js";
import { freePort } from "../helpers/free-port.js";

const binary = findLlamaServerBinary();
const WORDS = "river stone garden window lantern meadow copper violin harbor orchard thunder pepper canvas silver bridge mirror candle forest pocket ladder";


describe("llama-server: a reply it cannot parse at the end", { skip: binary === null ? "llama-server not built: run npm run build:llama-server" : false }, () => {
  it("keeps the streamed text as the answer (finish stop) and logs a warning", async () => {
    const model = await ensureFixture("bench", { shape: "small" });
    const { dir, configPath } = await tempConfig();
    const yaml = configYaml({
      app: { data_dir: "./data" },
      llama: { binary, models: { default: localModel(model, { engine: "llama-server", port: await freePort() }) } },
      agents: { assistant: { temperature: 0, max_tokens: 24 } },
    });
    await writeFile(configPath, yaml);
    const cli = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "warn" } });
    try {
      const done = await cli.request({ id: 1, method: "chat", params: { session_id: "s1", input: `${WORDS} ${WORDS}` } }, 120_000);
      assert.equal(done.type, "result", JSON.stringify(done));
      const streamed = cli.messages.filter((m) => m.id === 1 && m.event === "llm_chunk").map((m) => (typeof m.delta === "string" ? m.delta : ""));
      const response = String((done.result as { response: string }).response);
      assert.ok(response.length > 0, "the model wrote something");
      assert.equal(response, streamed.join(""), "the answer is exactly the streamed text");
      assert.match(cli.stderr, /could not parse the reply into its chat format at the end; the streamed text is kept as the answer/);
      assert.match(cli.stderr, /peg-native format/, "the warning carries the server's message");
      assert.deepEqual(protocolViolations(cli), []);
    } finally {
      cli.endInput();
      await cli.exited;
    }
  });
});
