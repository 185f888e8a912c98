// ACP session config options as offered (the model select, grouped when downloaded models are
// served; thinking only where the model thinks), set_config_option's validation, and the stored
// side of session/delete: the session's folder and its turns in the memory index.
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { describe, it } from "node:test";
import type { AcpModels } from "../../src/acp/acp-deps.js";
import { applyOption, choiceOfMeta, metaWithChoice, sessionOptions } from "../../src/acp/session-config.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { FileSessionCatalog } from "../../src/store/file-session-catalog.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { MinisearchMemoryIndex } from "../../src/store/memory-index.js";
import { makeEntry, tempDataDir } from "../helpers/store-fixtures.js";

function models(downloaded: string[] = [], thinking: string[] = ["qwen3"]): AcpModels {
  return {
    agents: () => [
      { name: "coder", model: "qwen3" },
      { name: "chat", model: "llama" },
    ],
    downloaded: () => Promise.resolve(downloaded),
    thinks: (model) => Promise.resolve(thinking.includes(model)),
    canStopThinking: () => true,
  };
}

const start = { agent: "coder", model: null, thinking: true };

describe("ACP session config options", () => {
  it("agents as a flat select; downloaded models served on demand in a group of their own (an agent's name wins)", async () => {
    const flat = await sessionOptions(models(), start, true);
    assert.equal(flat.options[0]?.type, "select");
    assert.deepEqual(flat.options[0]?.type === "select" ? flat.options[0].options : null, [
      { value: "coder", name: "coder (qwen3)", description: "agent coder on model qwen3" },
      { value: "chat", name: "chat (llama)", description: "agent chat on model llama" },
    ]);
    const grouped = await sessionOptions(models(["phi.Q4_K_M.gguf", "chat"]), { agent: "coder", model: "phi.Q4_K_M.gguf", thinking: true }, true);
    const select = grouped.options[0];
    assert.ok(select?.type === "select");
    assert.equal(select.currentValue, "phi.Q4_K_M.gguf");
    assert.deepEqual(
      select.options.map((group) => ("group" in group ? [group.group, group.options.map((o) => o.value)] : null)),
      [
        ["agents", ["coder", "chat"]],
        ["downloaded", ["phi.Q4_K_M.gguf"]],
      ],
    );
    assert.equal(grouped.runsOn, "phi.Q4_K_M.gguf");
    assert.deepEqual(grouped.choice, { agent: "coder", model: "phi.Q4_K_M.gguf", thinking: true });
  });

  it("thinking only where the chosen model thinks: a boolean, or an on/off select for an editor without booleans", async () => {
    assert.deepEqual((await sessionOptions(models(), start, true)).options.map((o) => [o.id, o.type, o.currentValue]), [["model", "select", "coder"], ["thinking", "boolean", true]]);
    assert.deepEqual((await sessionOptions(models(), { ...start, thinking: false }, false)).options[1]?.currentValue, "off");
    assert.deepEqual((await sessionOptions(models(), { ...start, agent: "chat" }, true)).options.map((o) => o.id), ["model"]);
  });

  it("a choice that is no longer offered falls back to the default agent, keeping thinking, and says why", async () => {
    const offered = await sessionOptions(models(), { agent: "coder", model: "gone.gguf", thinking: false }, true);
    assert.deepEqual(offered.choice, { agent: "coder", model: null, thinking: false });
    assert.match(offered.fellBack ?? "", /"gone\.gguf" is no longer offered .* back to the default agent coder/);
  });

  it("set_config_option: the new choice; unknown ids and values are invalid_params naming the valid ones", async () => {
    const offered = await sessionOptions(models(["phi.gguf"]), start, true);
    assert.deepEqual(await applyOption(models(["phi.gguf"]), offered, "model", "chat"), { agent: "chat", model: null, thinking: true });
    assert.deepEqual(await applyOption(models(["phi.gguf"]), offered, "model", "phi.gguf"), { agent: "coder", model: "phi.gguf", thinking: true });
    assert.deepEqual(await applyOption(models(), offered, "thinking", false), { ...start, thinking: false });
    assert.deepEqual(await applyOption(models(), offered, "thinking", "off"), { ...start, thinking: false });
    const refused = (message: RegExp, valid: string[]) => (error: unknown): boolean =>
      error instanceof RuntimeError && error.code === "invalid_params" && message.test(error.message) && JSON.stringify(error.details?.valid) === JSON.stringify(valid);
    await assert.rejects(applyOption(models(), offered, "mode", "x"), refused(/^Unknown config option "mode"; this session offers: model, thinking$/, ["model", "thinking"]));
    await assert.rejects(applyOption(models(["phi.gguf"]), offered, "model", "gpt"), refused(/^Unknown value "gpt" for config option "model"; valid values: coder, chat, phi\.gguf$/, ["coder", "chat", "phi.gguf"]));
    await assert.rejects(applyOption(models(), offered, "model", true), refused(/^Unknown value true for config option "model"/, ["coder", "chat"]));
    await assert.rejects(applyOption(models(), offered, "thinking", "maybe"), refused(/valid values: on, off, true, false$/, ["on", "off", "true", "false"]));
  });

  it("the choice in session.json: defaults left out, read back with defaults filled in", () => {
    const meta = { version: 1 as const, cwd: "/ws", title: "t", created_at: "a", updated_at: "b", agent: "chat", thinking: false };
    assert.deepEqual(metaWithChoice(meta, start), { version: 1, cwd: "/ws", title: "t", created_at: "a", updated_at: "b", agent: "coder" });
    assert.deepEqual(choiceOfMeta(meta, models()), { agent: "chat", model: null, thinking: false });
    assert.deepEqual(choiceOfMeta(null, models()), start);
  });
});

describe("deleting a stored session", () => {
  it("the catalog removes its folder (false when there is none); the memory index forgets its turns only", async () => {
    const dataDir = await tempDataDir();
    try {
      const store = new FileSessionStore(dataDir);
      await store.appendTurn("u1", "s1", makeEntry(1, "How long should I boil pasta?", "About nine minutes."));
      await store.appendTurn("u1", "s2", makeEntry(2, "Will it rain tomorrow?", "I cannot see forecasts."));
      const catalog = new FileSessionCatalog(dataDir, store);
      const memory = new MinisearchMemoryIndex(dataDir, store);
      await memory.ensureUser("u1");
      assert.equal(memory.search("u1", "pasta", 200).length, 1);
      assert.equal(await catalog.remove("u1", "s1"), true);
      memory.forgetSession("u1", "s1");
      assert.equal(await catalog.exists("u1", "s1"), false);
      assert.equal(await catalog.remove("u1", "s1"), false);
      assert.deepEqual(await store.listSessions("u1"), ["s2"]);
      assert.deepEqual(memory.search("u1", "pasta", 200), []);
      assert.equal(memory.search("u1", "rain", 200).length, 1);
      assert.equal(memory.size("u1"), 1);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
