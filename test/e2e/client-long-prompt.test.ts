// LocalAiClient on the built CLI with a long prompt (embedded engine, a bench-shaped model with a
// 32 k context): the chat turn yields typed `prompt_progress` events while the prompt is read.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { LocalAiClient, type ChatEvent } from "../../src/client/index.js";
import { tempConfig } from "../helpers/temp-config.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { WireTap } from "../helpers/wire-recorder.js";
import { collect } from "../helpers/collect.js";
import { LONG_PROMPT_SHAPE, longPromptText } from "../helpers/long-prompt.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

let configPath = "";
before(async () => {
  const model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE });
  ({ configPath } = await tempConfig(
    configYaml({ llama: { models: { default: localModel(model, { ctx_size: 32768, threads: 1, parallel: 1 }) } }, agents: { assistant: { temperature: 0, max_tokens: 4 } } }),
  ));
});

type PromptProgressEvent = Extract<ChatEvent, { event: "prompt_progress" }>;

describe("LocalAiClient: a long prompt", () => {
  it("the chat turn yields typed prompt_progress events, the last one (processed == total) before the first text", async (t) => {
    const local = new LocalAiClient({ config: configPath, env: { LOCAL_AI_LOG_LEVEL: "warn" }, trace: new WireTap("v1", "LocalAiClient").trace });
    // A failed assertion must not leave the child running (the test file would never end).
    t.after(() => local.close());
    await local.start();
    const turn = local.chat({ session_id: "long", input: longPromptText(3000, 4) });
    const events = await collect(turn);
    await turn.result;
    // Narrowed on `event`: the fields are numbers to the compiler, not `unknown`.
    const progress: PromptProgressEvent[] = events.filter((event): event is PromptProgressEvent => event.event === "prompt_progress");
    assert.ok(progress.length >= 1, `no prompt_progress among ${events.map((event) => event.event).join(",")}`);
    const usage = events.find((event) => event.event === "usage");
    assert.ok(usage?.event === "usage");
    for (const [index, event] of progress.entries()) {
      assert.deepEqual(Object.keys(event).sort(), ["cached", "event", "processed", "step", "total"]);
      const { step, processed, total, cached }: { step: number; processed: number; total: number; cached: number } = event;
      assert.equal(step, 0);
      assert.equal(total, usage.input_tokens, "total is the step's prompt");
      assert.equal(cached, 0, "a new session reuses nothing");
      assert.ok(processed <= total);
      if (index > 0) assert.ok(processed >= progress[index - 1]!.processed, "processed never decreases");
    }
    const last = progress.at(-1)!;
    assert.equal(last.processed, last.total);
    const firstText = events.findIndex((event) => event.event === "llm_chunk");
    assert.ok(firstText >= 0 && events.indexOf(last) < firstText, "progress comes before the step's text");
    assert.equal(turn.droppedEvents, 0);
    await local.close();
  });
});
