import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, mcpServer } from "../helpers/config-yaml.js";
import { allGone as gone, childrenOf } from "../helpers/process-children.js";

const require = createRequire(import.meta.url);
const FILESYSTEM_SERVER = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")), "dist/index.js");

for (const how of ["SIGTERM", "stdin EOF", "shutdown"] as const) {
  describe(`serve-stdio leaves no child behind (${how})`, () => {
    it("stops llama-server and the MCP servers", async (t) => {
      const binary = findLlamaServerBinary();
      if (binary === null) {
        process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
        t.skip("llama-server not built: run npm run build:llama-server");
        return;
      }
      const { dir, configPath } = await tempConfig(
        configYaml({
          llama: { binary, models: { default: localModel(await ensureFixture("demo"), { engine: "llama-server", port: 18490 + ["SIGTERM", "stdin EOF", "shutdown"].indexOf(how) }) } },
          agents: { assistant: { temperature: 0 } },
          mcp: { servers: { fs: mcpServer({ command: process.execPath, args: [FILESYSTEM_SERVER, "."] }) } },
        }),
      );
      const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
      const reply = await proc.request({ id: 1, method: "chat", params: { input: "hi" } }, 60_000);
      assert.equal((reply.result as { response: string }).response, DEMO_SENTENCE);
      const pidFile = JSON.parse(await readFile(path.join(dir, "data", "run", "llama-server-default.pid"), "utf8")) as { pid: number };
      const children = await childrenOf(proc.child.pid ?? -1);
      assert.ok(children.includes(pidFile.pid), "llama-server is our child");
      assert.ok(children.length >= 2, `llama-server and the MCP server run (${children.join(", ")})`);
      if (how === "SIGTERM") proc.kill("SIGTERM");
      else if (how === "stdin EOF") proc.endInput();
      else proc.send({ id: "bye", method: "shutdown" });
      assert.equal((await proc.exited).code, 0);
      assert.ok(await gone([pidFile.pid, ...children]), "every child is gone");
    });
  });
}
