import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseConfigText } from "../../src/config/load-config.js";
import { toOpenAiError } from "../../src/http/http-error.js";
import { ModelResolver, type ModelNames } from "../../src/http/resolve-model.js";

const agents = { assistant: "default", tiny: "other", coder: "big" };

/** The 404 body a resolution throws (asserting that it is one). */
function notFound(run: () => unknown): string {
  let message = "";
  assert.throws(run, (error: unknown) => {
    const { status, body } = toOpenAiError(error);
    assert.deepEqual([status, body.error.code, body.error.param], [404, "model_not_found", "model"]);
    message = body.error.message;
    return true;
  });
  return message;
}

describe("ModelResolver: the model a request names", () => {
  it("agents first, then a configured model name (where the endpoint takes them); missing is the default agent", () => {
    const resolver = new ModelResolver({ agents });
    assert.deepEqual(resolver.resolve("assistant", ["default", "other", "tiny"]), { id: "assistant", agent: "assistant", modelName: "default" });
    assert.deepEqual(resolver.resolve("tiny", ["default", "other", "tiny"]), { id: "tiny", agent: "tiny", modelName: "other" }, "an agent wins over a model of the same name");
    assert.deepEqual(resolver.resolve("other", ["default", "other"]), { id: "other", agent: null, modelName: "other" });
    assert.deepEqual(resolver.resolve(undefined), { id: "assistant", agent: "assistant", modelName: "default" });
    assert.match(notFound(() => resolver.resolve("other")), /^The model "other" does not exist\. Available: assistant, tiny, coder$/, "chat takes no model names");
    assert.match(notFound(() => resolver.resolve("toString", ["default"])), /Available: assistant, tiny, coder, default$/);
  });

  it("an exact alias beats a glob; the longest glob wins, the first in the config on a tie", () => {
    const names: ModelNames = { agents, aliases: { "gpt-*": "assistant", "gpt-5*": "coder", "gpt-5-mini": "tiny", "claude-*": "assistant", "*-haiku*": "tiny", "c?aude-opus-*": "coder" } };
    const resolver = new ModelResolver(names);
    const agentOf = (name: string): string | null => resolver.resolve(name).agent;
    assert.equal(agentOf("gpt-5-mini"), "tiny", "exact alias over the globs that match it");
    assert.equal(agentOf("gpt-5-codex"), "coder", "gpt-5* is longer than gpt-*");
    assert.equal(agentOf("gpt-4o"), "assistant");
    assert.equal(agentOf("claude-opus-4-1"), "coder", "c?aude-opus-* (13) over claude-* (8)");
    assert.equal(agentOf("claude-sonnet-4"), "assistant");
    // claude-* and *-haiku* are both 8 characters: the first in the config wins.
    assert.equal(agentOf("claude-haiku-4-5"), "assistant");
    assert.equal(new ModelResolver({ agents, aliases: { "*-haiku*": "tiny", "claude-*": "assistant" } }).resolve("claude-haiku-4-5").agent, "tiny");
    assert.deepEqual(resolver.resolve("gpt-5-codex"), { id: "gpt-5-codex", agent: "coder", modelName: "big" }, "the asked-for name is echoed");
  });

  it("an exact configured model name beats a glob (embeddings, completions)", () => {
    const resolver = new ModelResolver({ agents, aliases: { "big*": "assistant" } });
    assert.deepEqual(resolver.resolve("big", ["default", "other", "big"]), { id: "big", agent: null, modelName: "big" });
    assert.equal(resolver.resolve("bigger", ["default", "other", "big"]).agent, "assistant");
  });

  it("unknown: error (the default) lists what exists, globs named as such; default answers with the default agent", () => {
    const aliases = { "gpt-5*": "coder", sonnet: "assistant" };
    const message = notFound(() => new ModelResolver({ agents, aliases }).resolve("llama-9"));
    assert.equal(message, 'The model "llama-9" does not exist. Available: assistant, tiny, coder, sonnet; and any name matching gpt-5*');
    notFound(() => new ModelResolver({ agents, aliases, unknownModel: "error" }).resolve("llama-9"));
    assert.deepEqual(new ModelResolver({ agents, aliases, unknownModel: "default" }).resolve("llama-9"), { id: "llama-9", agent: "assistant", modelName: "default", fallback: true });
    notFound(() => new ModelResolver({ agents: {}, unknownModel: "default" }).resolve("x"));
  });

  it("lists the agents, then the exact aliases; globs are not listed", () => {
    const resolver = new ModelResolver({ agents, aliases: { "gpt-5*": "coder", sonnet: "assistant", "o?": "tiny" } });
    assert.deepEqual(resolver.listed(), [{ id: "assistant", agent: "assistant" }, { id: "tiny", agent: "tiny" }, { id: "coder", agent: "coder" }, { id: "sonnet", agent: "assistant" }]);
  });

  it("the config refuses an alias to an unknown agent and an alias that is an agent's name", () => {
    const yaml = (aliases: string): string => `llama:\n  models:\n    default:\n      path: /x.gguf\nagents:\n  assistant: {}\nhttp:\n  unknown_model: default\n  model_aliases: ${aliases}\n`;
    const good = parseConfigText(yaml('{"claude-*": assistant}'), {}, "/");
    assert.ok(good.ok);
    assert.deepEqual(good.ok && [good.config.http.model_aliases, good.config.http.unknown_model], [{ "claude-*": "assistant" }, "default"]);
    const bad = parseConfigText(yaml("{gpt-5*: coder, assistant: assistant}"), {}, "/");
    assert.ok(!bad.ok);
    const problems = JSON.stringify(bad.ok ? [] : bad.problems);
    assert.match(problems, /http\.model_aliases\.gpt-5\*.*agent \\"coder\\" is not defined under agents/);
    assert.match(problems, /http\.model_aliases\.assistant.*an agent's name already/);
  });
});
