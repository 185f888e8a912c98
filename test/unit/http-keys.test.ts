// Scoped API keys, the logic parts: the constant-time key ring (structure, not timing), the
// per-key limits on an injected clock, the scope checks and their messages, the tool scope the
// agent gets, and the startup checks of the token sources.
import assert from "node:assert/strict";
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parseConfigText } from "../../src/config/load-config.js";
import { configSchema } from "../../src/config/schema.js";
import { fullRightsKey, type ApiKey } from "../../src/http/keys/api-key.js";
import { KeyLimiter } from "../../src/http/keys/key-limiter.js";
import { KeyRing, SHA256_COMPARE, type TokenCompare } from "../../src/http/keys/key-ring.js";
import { KeyScope } from "../../src/http/keys/key-scope.js";
import { resolveApiKeys } from "../../src/http/keys/resolve-keys.js";
import { HttpError } from "../../src/http/http-error.js";
import { ScopedToolProvider } from "../../src/tools/scoped-tool-provider.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";

const key = (name: string, token: string, rights: Partial<ApiKey> = {}): ApiKey => ({ ...fullRightsKey(name, token), ...rights });

/** The real primitives, with every call recorded: what a lookup did, whatever the answer. */
function recordingCompare(): { compare: TokenCompare; work: string[] } {
  const work: string[] = [];
  return {
    work,
    compare: {
      digest: (value) => {
        work.push("digest");
        return SHA256_COMPARE.digest(value);
      },
      equal: (a, b) => {
        work.push(`equal ${a.length}/${b.length}`);
        return SHA256_COMPARE.equal(a, b);
      },
    },
  };
}

describe("KeyRing: constant-time lookup", () => {
  const token = "tok-0123456789abcdef";
  const keys = [key("first", token), key("second", "another-token-of-another-length"), key("third", "t3")];

  it("a wrong first byte and a wrong last byte do the same work: one digest, one 32-byte comparison per key, no early return", () => {
    const traces = ["Xok-0123456789abcdef", "tok-0123456789abcdeX", token, "x", "a much longer token than any configured one"].map((presented) => {
      const { compare, work } = recordingCompare();
      const ring = new KeyRing(keys, compare);
      work.length = 0; // the ring's own digests at construction
      const found = ring.find(presented);
      return { found: found?.name ?? null, work: [...work] };
    });
    const expected = ["digest", "equal 32/32", "equal 32/32", "equal 32/32"];
    for (const trace of traces) assert.deepEqual(trace.work, expected);
    assert.deepEqual(traces.map((trace) => trace.found), [null, null, "first", null, null]);
  });

  it("a match on the first key still compares every other key", () => {
    let comparisons = 0;
    const ring = new KeyRing(keys, { digest: (value) => SHA256_COMPARE.digest(value), equal: (a, b) => (comparisons++, SHA256_COMPARE.equal(a, b)) });
    comparisons = 0;
    assert.equal(ring.find(token)?.name, "first");
    assert.equal(comparisons, keys.length);
  });

  it("Authorization: Bearer <token> (any case, spaces trimmed); anything else finds no key", () => {
    const ring = new KeyRing(keys);
    assert.equal(ring.fromAuthorization(`Bearer ${token}`)?.name, "first");
    assert.equal(ring.fromAuthorization(`bearer   t3  `)?.name, "third");
    assert.equal(ring.fromAuthorization(`Basic ${token}`), null);
    assert.equal(ring.fromAuthorization(undefined), null);
  });
});

describe("KeyLimiter", () => {
  it("requests_per_minute: a sliding minute; Retry-After is the seconds until the oldest request leaves it; a refusal counts for nothing", () => {
    let now = 1_000_000;
    const limiter = new KeyLimiter({ maxConcurrent: null, requestsPerMinute: 2 }, () => now);
    const first = limiter.admit();
    assert.ok(first.ok);
    first.release();
    now += 20_500;
    assert.ok(limiter.admit().ok);
    now += 10_000;
    assert.deepEqual(limiter.admit(), { ok: false, limit: "requests_per_minute", retryAfterS: 30 });
    now += 29_499;
    assert.deepEqual(limiter.admit(), { ok: false, limit: "requests_per_minute", retryAfterS: 1 });
    now += 1;
    assert.ok(limiter.admit().ok, "the first request has left the window");
    assert.deepEqual(limiter.admit(), { ok: false, limit: "requests_per_minute", retryAfterS: 21 });
  });

  it("max_concurrent: refused (Retry-After 1) while the slots are held; a release frees one, a second release of the same does nothing", () => {
    const limiter = new KeyLimiter({ maxConcurrent: 1, requestsPerMinute: null });
    const held = limiter.admit();
    assert.ok(held.ok);
    assert.deepEqual(limiter.admit(), { ok: false, limit: "max_concurrent", retryAfterS: 1 });
    held.release();
    held.release();
    assert.equal(limiter.inFlight, 0);
    const next = limiter.admit();
    assert.ok(next.ok);
    assert.equal(limiter.admit().ok, false, "the double release did not free a second slot");
  });
});

describe("KeyScope", () => {
  const scope = new KeyScope(key("limited", "t", { models: ["small"], endpoints: ["/v1/chat/*"], tools: ["fixture/echo"] }));

  it("models: the agent a request resolves to, named in the refusal with the alias the client sent", () => {
    assert.doesNotThrow(() => scope.assertModel({ id: "small", agent: "small", modelName: "m" }));
    assert.doesNotThrow(() => scope.assertModel({ id: "gpt-4o", agent: "small", modelName: "m" }));
    const refusal = (resolved: { id: string; agent: string | null; modelName: string }): HttpError => {
      try {
        scope.assertModel(resolved);
      } catch (error) {
        return error as HttpError;
      }
      throw new Error("not refused");
    };
    const byName = refusal({ id: "big", agent: "big", modelName: "m" });
    assert.deepEqual([byName.code, byName.param, byName.message], ["permission_denied", "model", 'API key "limited" may not use the model "big"']);
    assert.equal(refusal({ id: "gpt-5", agent: "big", modelName: "m" }).message, 'API key "limited" may not use the model "gpt-5" (agent "big")');
    assert.equal(refusal({ id: "embedder", agent: null, modelName: "embedder" }).message, 'API key "limited" may not use the model "embedder"');
  });

  it("endpoints: globs over the path, `*` crossing `/`", () => {
    assert.ok(scope.allowsEndpoint("/v1/chat/completions"));
    assert.equal(scope.allowsEndpoint("/v1/chat"), false);
    assert.equal(scope.allowsEndpoint("/v1/completions"), false);
    assert.throws(() => scope.assertEndpoint("POST", "/v1/embeddings"), { code: "permission_denied", message: 'API key "limited" may not use the endpoint POST /v1/embeddings' });
    assert.ok(new KeyScope(key("r", "t", { endpoints: ["/v1/responses*"] })).allowsEndpoint("/v1/responses/resp_1/input_items"));
  });

  it("tools: a scope for the turn only when the key limits them", () => {
    assert.deepEqual(scope.toolScope, { holder: 'API key "limited"', patterns: ["fixture/echo"] });
    assert.equal(new KeyScope(fullRightsKey("default", "t")).toolScope, undefined);
  });
});

describe("ScopedToolProvider", () => {
  const tools = (): ScriptedToolProvider =>
    new ScriptedToolProvider([{ name: "echo", server: "fixture", replies: { content: "echoed" } }, { name: "env", server: "fixture", replies: { content: "SECRET=1" } }]);

  it("lists the agent's tools unchanged; a forbidden call is refused before it runs and never reaches the provider", async () => {
    const inner = tools();
    const scoped = new ScopedToolProvider(inner, { holder: 'API key "limited"', patterns: ["fixture/echo"] });
    assert.deepEqual(scoped.list(["*"]).map((tool) => tool.name), ["echo", "env"]);
    assert.equal(await scoped.refusal("echo", {}), null);
    assert.equal(await scoped.refusal("env", {}), 'API key "limited" may not run the tool "env"');
    assert.deepEqual(await scoped.call("env", {}, {}), { status: "error", content: 'API key "limited" may not run the tool "env"', retryable: false });
    assert.deepEqual(await scoped.call("echo", {}, {}), { status: "ok", content: "echoed", retryable: false });
    assert.deepEqual(inner.calls.map((call) => call.name), ["echo"]);
    await scoped.close();
    assert.equal(inner.closed, false, "the shared provider outlives the turn");
  });
});

describe("http.keys: config and token sources", () => {
  const parse = (keys: unknown[]) => configSchema.safeParse({ http: { keys } });
  const messages = (keys: unknown[]): string[] => {
    const parsed = parse(keys);
    return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  };

  it("defaults: every model, endpoint and tool, no limits", () => {
    const parsed = parse([{ name: "ci", token: "x" }]);
    assert.ok(parsed.success);
    assert.deepEqual(parsed.data.http.keys[0], { name: "ci", token: "x", token_file: null, token_env: null, models: ["*"], endpoints: ["*"], tools: ["*"], max_concurrent: null, requests_per_minute: null });
  });

  it("a token_file is relative to the config's folder", () => {
    const result = parseConfigText("http:\n  keys:\n    - name: ci\n      token_file: secrets/ci.token\n", {}, "/srv/app");
    assert.ok(result.ok);
    assert.equal(result.config.http.keys[0]?.token_file, "/srv/app/secrets/ci.token");
  });

  it("refused: duplicate names, reserved names, not exactly one token source, a name unfit for a label", () => {
    assert.deepEqual(messages([{ name: "a", token: "x" }, { name: "a", token: "y" }]), ['http.keys.1.name: duplicate key name "a": each key needs its own name']);
    assert.deepEqual(messages([{ name: "default", token: "x" }]), ['http.keys.0.name: "default" is reserved (default, none: the bearer token\'s name and an unauthenticated request\'s)']);
    assert.deepEqual(messages([{ name: "a" }]), ['http.keys.0.token: key "a" needs exactly one of token, token_file, token_env (it has 0)']);
    assert.deepEqual(messages([{ name: "a", token: "x", token_env: "T" }]), ['http.keys.0.token: key "a" needs exactly one of token, token_file, token_env (it has 2)']);
    assert.equal(messages([{ name: "a b", token: "x" }]).length, 1);
  });

  it("tokens read from a file (mode 600) and the environment; a file others can read, an unset variable, two equal tokens are startup errors naming keys, never tokens", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "local-ai-keys-"));
    const file = path.join(dir, "ci.token");
    await writeFile(file, "from-file\n");
    await chmod(file, 0o600);
    const base = { models: ["*"], endpoints: ["*"], tools: ["*"], max_concurrent: null, requests_per_minute: 5 };
    const keys = [
      { name: "ci", token: null, token_file: file, token_env: null, ...base },
      { name: "bot", token: null, token_file: null, token_env: "BOT_TOKEN", ...base },
    ];
    const resolved = await resolveApiKeys({ bearerToken: "admin", keys, env: { BOT_TOKEN: "from-env" } });
    assert.deepEqual(resolved.map((k) => [k.name, k.token, k.requestsPerMinute]), [["ci", "from-file", 5], ["bot", "from-env", 5]]);

    await assert.rejects(resolveApiKeys({ bearerToken: null, keys, env: {} }), { message: 'http.keys[1] ("bot") token_env: $BOT_TOKEN is not set' });
    await assert.rejects(resolveApiKeys({ bearerToken: "from-env", keys, env: { BOT_TOKEN: "from-env" } }), { message: 'API keys "default" and "bot" have the same token: each key needs its own' });
    await assert.rejects(resolveApiKeys({ bearerToken: null, keys, env: { BOT_TOKEN: "from-file" } }), (error: Error) => error.message === 'API keys "ci" and "bot" have the same token: each key needs its own' && !error.message.includes("from-file"));
    await chmod(file, 0o644);
    await assert.rejects(resolveApiKeys({ bearerToken: null, keys, env: { BOT_TOKEN: "b" } }), { message: `http.keys[0] ("ci") token_file ${file} is readable by other users (mode 644); chmod 600 it` });
  });
});
