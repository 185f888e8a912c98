// A model split in GGUF parts (llama.cpp's gguf-split naming) loads from its first part and
// chats; a missing part is `model_missing` naming that part. Through the built CLI.
import assert from "node:assert/strict";
import { rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { writeSplitTinyModel } from "../helpers/pull-fixtures.js";
import { tempConfig } from "../helpers/temp-config.js";

describe("a split GGUF model through serve-stdio", () => {
  it("loads from its first part and generates; without its second part the error names that part", async () => {
    const { dir, configPath } = await tempConfig();
    const [first, second] = await writeSplitTinyModel(dir, "split-tiny");
    await writeFile(configPath, `app:\n  data_dir: ./data\nllama:\n  models:\n    default:\n      path: ./${path.basename(first)}\n      ctx_size: 256\nagents:\n  a:\n    model: default\n    max_tokens: 8\n    temperature: 0\n`);

    const cli = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    try {
      const done = await cli.request({ id: 1, method: "chat", params: { input: "hello there" } }, 120_000);
      assert.equal(done.type, "result", JSON.stringify(done));
      const usage = cli.messages.find((message) => message.id === 1 && message.event === "usage");
      assert.equal(usage?.output_tokens, 8, "the model generated its max_tokens: both parts' tensors loaded");
    } finally {
      cli.endInput();
      await cli.exited;
    }

    await rename(second, `${second}.away`);
    const broken = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    try {
      const failed = await broken.request({ id: 1, method: "chat", params: { input: "hello there" } }, 120_000);
      assert.equal(failed.type, "error");
      assert.equal(failed.code, "model_missing");
      assert.match(String(failed.message), new RegExp(`${path.basename(second).replace(/\./g, "\\.")}`));
    } finally {
      broken.endInput();
      await broken.exited;
    }
  });
});
