import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const HOOK = new URL("../helpers/module-log-hook.js", import.meta.url).href;
const CLIENT = new URL("../../src/client/index.js", import.meta.url).href;
const DIST_SRC = pathToFileURL(fileURLToPath(new URL("../../src/", import.meta.url))).href;

describe("local-ai-core/client's import graph", () => {
  it("loads only the client, src/shared and node: modules (no engine, no dependency at all)", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "client-import-"));
    try {
      const log = path.join(dir, "modules.txt");
      const child = spawn(process.execPath, ["--import", HOOK, "--input-type=module", "-e", `const m = await import(${JSON.stringify(CLIENT)}); if (typeof m.LocalAiClient !== "function") process.exit(9);`], {
        env: { ...process.env, LOCAL_AI_TEST_MODULE_LOG: log },
        stdio: "inherit",
      });
      const [code] = (await once(child, "exit")) as [number | null];
      assert.equal(code, 0);
      const urls = (await readFile(log, "utf8")).split("\n").filter((line) => line !== "" && !line.startsWith("node:") && !line.endsWith("/module-log-hook.js") && !line.endsWith("/module-log-loader.js"));
      assert.ok(urls.includes(CLIENT), `the hook saw the client: ${urls.join(", ")}`);
      const outside = urls.filter((url) => !url.startsWith(`${DIST_SRC}client/`) && !url.startsWith(`${DIST_SRC}shared/`));
      assert.deepEqual(outside, [], "imported by the client");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
