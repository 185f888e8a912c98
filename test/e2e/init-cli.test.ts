import assert from "node:assert/strict";
import { copyFile, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { loadConfig } from "../../src/config/load-config.js";
import { runCli, type CliRun } from "../helpers/run-cli.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

/** The built CLI in `cwd` with a clean environment (no LOCAL_AI_CONFIG of the developer's); `input` piped to stdin. */
function cli(args: readonly string[], cwd: string, input = ""): Promise<CliRun> {
  return runCli(args, cwd, { input });
}

const folder = (): Promise<string> => mkdtemp(path.join(tmpdir(), "local-ai-init-"));

describe("local-ai init", () => {
  it("writes a valid starter config with the default model and prints the next commands; never overwrites without --force", async () => {
    const dir = await folder();
    const file = path.join(dir, "config.yaml");
    const first = await cli(["init"], dir);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(
      first.stdout,
      [
        `Wrote ${file}: model hf:Qwen/Qwen3-4B-GGUF:Q4_K_M, agent assistant, no tools.`,
        "Next:",
        "  local-ai pull hf:Qwen/Qwen3-4B-GGUF:Q4_K_M   # download the model (it checks first that the model fits this machine)",
        "  local-ai doctor                              # check the machine, the config and the model",
        "  local-ai chat                                # chat with the assistant in the terminal",
        "",
      ].join("\n"),
    );
    const text = await readFile(file, "utf8");
    assert.match(text, /^ {6}path: "hf:Qwen\/Qwen3-4B-GGUF:Q4_K_M" +# the GGUF model/m);
    assert.match(text, /# sessions, checkpoints, memory; created if missing/, "commented like config.example.yaml");
    const state = await loadConfig({ cwd: dir, env: {} });
    assert.equal(state.status, "loaded", JSON.stringify(state));
    if (state.status !== "loaded") return;
    assert.deepEqual(Object.keys(state.config.agents), ["assistant"]);
    assert.deepEqual(state.config.agents.assistant?.tools, [], "no tools");
    assert.deepEqual(Object.keys(state.config.mcp.servers), []);

    const again = await cli(["init", "--model", "https://example.com/other.gguf"], dir);
    assert.equal(again.code, 1);
    assert.equal(again.stdout, "");
    assert.equal(again.stderr, `local-ai init: ${file} already exists; nothing was written (pass --force to replace it)\n`);
    assert.equal(await readFile(file, "utf8"), text, "the existing file is untouched");

    const forced = await cli(["init", "--force", "--model", "https://example.com/other.gguf"], dir);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /^Replaced .*config\.yaml: model https:\/\/example\.com\/other\.gguf/);
    assert.match(forced.stdout, /^ {2}local-ai pull https:\/\/example\.com\/other\.gguf +# download the model/m);
    assert.match(await readFile(file, "utf8"), /path: "https:\/\/example\.com\/other\.gguf"/);
  });

  it("a local model file: no pull step, and the config it writes is one `local-ai chat` runs on", async () => {
    const dir = await folder();
    await copyFile(await ensureFixture("demo"), path.join(dir, "demo.gguf"));
    const init = await cli(["init", "--model", "./demo.gguf"], dir);
    assert.equal(init.code, 0, init.stderr);
    assert.doesNotMatch(init.stdout, /pull|Note:/);
    assert.match(init.stdout, /^ {2}local-ai doctor +# check/m);
    const chat = await cli(["chat"], dir, "Hello!\n");
    assert.equal(chat.code, 0, chat.stderr);
    assert.equal(chat.stdout, `${DEMO_SENTENCE}\n`);
  });

  it("a path that is not there yet gets a note; quotes and $ in the reference stay literal", async () => {
    const dir = await folder();
    const odd = './we"ird ${HOME} $$.gguf';
    const init = await cli(["init", "--model", odd], dir);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /^Note: .*we"ird \$\{HOME\} \$\$\.gguf does not exist yet/m);
    const state = await loadConfig({ cwd: dir, env: { HOME: "/should/not/appear" } });
    assert.equal(state.status, "loaded", JSON.stringify(state));
    if (state.status === "loaded") assert.equal(state.config.llama.models.default?.path, path.join(dir, 'we"ird ${HOME} $$.gguf'));
  });
});
