// Two sessions taking turns on one serve-stdio (embedded engine, `parallel: 2`): each turn finds
// its own conversation still in a context sequence's KV cache and evaluates only what is new.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";

let demo = "";
before(async () => {
  demo = await ensureFixture("demo");
});

const usageOf = (proc: CliProcess, id: string): WireMessage => {
  const usage = proc.messages.find((m) => m.id === id && m.event === "usage");
  assert.ok(usage, `no usage event for ${id}`);
  return usage;
};

describe("KV cache reuse across turns and sessions (built CLI, embedded engine)", () => {
  it("sessions taking turns keep their prefix cached: cached_input_tokens covers the whole previous prompt", async () => {
    const { dir, configPath } = await tempConfig(
      configYaml({ llama: { models: { default: localModel(demo, { parallel: 2 }) } }, agents: { assistant: { temperature: 0 } } }),
    );
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const turns = [
      ["a1", "alpha", "Tell me about apples"],
      ["b1", "beta", "Tell me about boats"],
      ["a2", "alpha", "And pears?"],
      ["b2", "beta", "And ships?"],
      ["a3", "alpha", "And plums?"],
    ] as const;
    for (const [id, session, input] of turns) {
      const reply = await proc.request({ id, method: "chat", params: { session_id: session, input } }, 30_000);
      assert.equal((reply.result as { response: string }).response, DEMO_SENTENCE, JSON.stringify(reply));
    }
    for (const [later, earlier] of [["a2", "a1"], ["b2", "b1"], ["a3", "a2"]] as const) {
      const now = usageOf(proc, later);
      const before = usageOf(proc, earlier);
      const cached = Number(now.cached_input_tokens);
      assert.ok(cached >= Number(before.input_tokens), `${later}: ${cached} cached of ${String(now.input_tokens)}; ${earlier}'s whole prompt was ${String(before.input_tokens)}`);
      assert.ok(cached < Number(now.input_tokens), `${later}: the new input is evaluated`);
    }
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});
