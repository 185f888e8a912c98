// Scale-out (docs/scale-out.md): the recipe's config block, run as written with its two endpoints
// replaced by two scripted vLLM-compatible upstreams. The conversation's key reaches the upstream
// in the body (prompt_cache_key) and the affinity header; the first endpoint killed mid-test, the
// next request goes to the second with the same key; a 4xx from the first is not failed over.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { parse } from "yaml";
import { configYaml } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { listingModel, sendJsonError, startUpstream, type RecordedRequest, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";

const RECIPE_URLS = ["http://vllm-a.internal:8000/v1", "http://vllm-b.internal:8000/v1"];

let server: HttpServer;
let first: AgentUpstream;
let second: AgentUpstream;
let refusing: ScriptedUpstream;
let behindRefusing: AgentUpstream;
const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0, timeout: 60_000 });

/** The recipe's YAML block from docs/scale-out.md, as an object. */
async function recipe(): Promise<Record<string, unknown>> {
  const doc = await readFile(new URL("../../../docs/scale-out.md", import.meta.url), "utf8");
  const block = /## Recipe[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block !== undefined, "docs/scale-out.md has no recipe block");
  for (const url of RECIPE_URLS) assert.ok(block.includes(url), `the recipe lists ${url}`);
  return parse(block) as Record<string, unknown>;
}

before(async () => {
  [first, second, behindRefusing] = await Promise.all([startAgentUpstream(), startAgentUpstream(), startAgentUpstream()]);
  // Answers /models (the warm-up) and refuses every chat with a 400.
  refusing = await startUpstream(listingModel("test-model", (_req, res) => sendJsonError(res, 400, "prompt too long for this replica")));
  const config = await recipe();
  const llama = config.llama as { models: Record<string, Record<string, unknown>> };
  llama.models.default!.base_url = [first.baseUrl, second.baseUrl];
  llama.models.strict = { engine: "openai", base_url: [refusing.baseUrl, behindRefusing.baseUrl], model: "test-model" };
  (config.agents as Record<string, unknown>).strict = { model: "strict" };
  server = await startHttpServer(configYaml(config), [], { VLLM_API_KEY: "vllm-key" });
});

after(async () => {
  await server?.stop();
  await Promise.allSettled([first, second, refusing, behindRefusing].map((upstream) => upstream?.close()));
});

type Body = { prompt_cache_key?: string; model?: string; messages?: Array<{ role: string; content: unknown }> };
const bodyOf = (request: RecordedRequest | undefined): Body => request?.body ?? {};
const keyOf = (request: RecordedRequest | undefined): [string | undefined, unknown] => [bodyOf(request).prompt_cache_key, request?.headers["x-session-affinity"]];

describe("the openai engine in front of a serving cluster (docs/scale-out.md recipe)", () => {
  let key = "";
  let last = "";

  it("one conversation's key goes up in prompt_cache_key and x-session-affinity, the same on every turn; another conversation has another", async () => {
    first.push({ text: ["one"] }, { text: ["two"] }, { text: ["other"] });
    const turn1 = await client().responses.create({ model: "assistant", input: "hello" });
    const turn2 = await client().responses.create({ model: "assistant", input: "more", previous_response_id: turn1.id });
    const chats = first.chats();
    assert.equal(chats.length, 2);
    key = String(bodyOf(chats[0]).prompt_cache_key);
    assert.match(key, /^[0-9a-f]{32}$/);
    assert.deepEqual(chats.map(keyOf), [[key, key], [key, key]]);
    assert.equal(chats[0]?.headers.authorization, "Bearer vllm-key");
    assert.equal(bodyOf(chats[0]).model, "Qwen/Qwen2.5-7B-Instruct");
    assert.equal(second.chats().length, 0, "failover is not load balancing: the first endpoint takes every request while it is up");
    await client().responses.create({ model: "assistant", input: "unrelated" });
    const other = keyOf(first.chats()[2]);
    assert.equal(other[0], other[1]);
    assert.notEqual(other[0], key);
    last = turn2.id;
  });

  it("the first endpoint killed: the next requests go to the second, with the same key and the whole conversation; its circuit opens", async () => {
    await first.close();
    second.push({ text: ["three"] }, { text: ["four"] }, { text: ["five"] });
    let previous = last;
    const answers: string[] = [];
    for (const input of ["again", "and again", "once more"]) {
      const response = await client().responses.create({ model: "assistant", input, previous_response_id: previous });
      answers.push(response.output_text);
      previous = response.id;
    }
    assert.deepEqual(answers, ["three", "four", "five"]);
    const chats = second.chats();
    assert.deepEqual(chats.map(keyOf), [[key, key], [key, key], [key, key]]);
    assert.deepEqual(bodyOf(chats[0]).messages?.slice(1).map((m) => [m.role, m.content]), [["user", "hello"], ["assistant", "one"], ["user", "more"], ["assistant", "two"], ["user", "again"]]);
    // Three connection failures in a row open the first endpoint's circuit: it is skipped now.
    const health = (await (await fetch(`${server.base}/health`)).json()) as { models: Record<string, { info: { endpoints: unknown } }> };
    assert.deepEqual(health.models.default?.info.endpoints, [
      { base_url: first.baseUrl, circuit: "open" },
      { base_url: second.baseUrl, circuit: "closed" },
    ]);
  });

  it("a 4xx from the first endpoint is the answer: the request is not sent to the second", async () => {
    const error = await client()
      .chat.completions.create({ model: "strict", messages: [{ role: "user", content: "hi" }] })
      .then(
        () => assert.fail("the refused request succeeded"),
        (caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>,
      );
    assert.equal(error.status, 502);
    assert.match(error.message, /HTTP 400.*prompt too long for this replica/);
    assert.equal(refusing.requests.filter((request) => request.method === "POST").length, 1);
    assert.equal(behindRefusing.chats().length, 0);
  });
});
