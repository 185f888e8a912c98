import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadConfig, locateConfig, parseConfigText, requireConfig } from "../../src/config/load-config.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

function problemsOf(text: string, env: Record<string, string> = {}): Array<{ path: string; message: string; line?: number; found?: string }> {
  const result = parseConfigText(text, env, "/base");
  assert.equal(result.ok, false, "expected the config to be rejected");
  return result.ok ? [] : result.problems;
}

describe("config", () => {
  it("fills every default for an empty file", () => {
    const result = parseConfigText("", {}, "/base");
    assert.ok(result.ok);
    const { config } = result;
    assert.equal(config.app.data_dir, "/base/.local-ai");
    assert.equal(config.app.log_level, "info");
    assert.equal(config.app.max_steps, 8);
    assert.equal(config.app.max_parse_errors, 2);
    assert.equal(config.stdio.max_line_bytes, 8 * 1024 * 1024);
    assert.equal(config.http.host, "127.0.0.1");
    assert.equal(config.http.port, 8080);
    assert.equal(config.http.bearer_token, null);
    assert.deepEqual(config.llama.models, {});
    assert.equal(config.stdio.coalesce_ms, 33);
    assert.equal(config.http.coalesce_ms, 33);
  });

  it("coalesce_ms: 0 turns merging off; negative, fractional or over 1000 ms are refused", () => {
    const result = parseConfigText("stdio:\n  coalesce_ms: 0\nhttp:\n  coalesce_ms: 16\n", {}, "/base");
    assert.ok(result.ok);
    assert.equal(result.config.stdio.coalesce_ms, 0);
    assert.equal(result.config.http.coalesce_ms, 16);
    const problems = problemsOf("stdio:\n  coalesce_ms: -1\nhttp:\n  coalesce_ms: 2.5\n");
    assert.deepEqual(problems.map((p) => [p.path, p.line]), [["stdio.coalesce_ms", 2], ["http.coalesce_ms", 4]]);
    assert.deepEqual(problemsOf("stdio:\n  coalesce_ms: 5000\n").map((p) => p.path), ["stdio.coalesce_ms"]);
  });

  it("kv_cache_disk_bytes: 1 GiB by default, 0 turns it off, negative or fractional values are refused", () => {
    const result = parseConfigText("llama:\n  models:\n    a:\n      path: a.gguf\n    b:\n      path: b.gguf\n      kv_cache_disk_bytes: 0\n", {}, "/base");
    assert.ok(result.ok);
    assert.equal(result.config.llama.models.a?.kv_cache_disk_bytes, 1024 * 1024 * 1024);
    assert.equal(result.config.llama.models.b?.kv_cache_disk_bytes, 0);
    const problems = problemsOf("llama:\n  models:\n    a:\n      path: a.gguf\n      kv_cache_disk_bytes: -1\n    b:\n      path: b.gguf\n      kv_cache_disk_bytes: 1.5\n");
    assert.deepEqual(problems.map((p) => [p.path, p.line]), [["llama.models.a.kv_cache_disk_bytes", 5], ["llama.models.b.kv_cache_disk_bytes", 8]]);
  });

  it("loads config.example.yaml without error and it documents every key", async () => {
    const state = await loadConfig({ flag: path.join(REPO, "config.example.yaml"), env: {} });
    assert.equal(state.status, "loaded", JSON.stringify(state));
    const text = await readFile(path.join(REPO, "config.example.yaml"), "utf8");
    for (const key of ["data_dir", "log_level", "max_steps", "max_parse_errors", "binary", "embedded_binary", "engine", "path", "port", "ctx_size", "gpu_layers", "base_url", "api_key", "model", "system_prompt", "tools", "temperature", "seed", "max_tokens", "command", "args", "env", "requires_approval", "host", "bearer_token", "max_line_bytes", "coalesce_ms", "kv_cache_disk_bytes"]) {
      assert.match(text, new RegExp(`^[\\s#]*${key}:.*#`, "m"), `${key} has a comment`);
    }
  });

  it("resolves relative paths against the config folder", () => {
    const result = parseConfigText("app:\n  data_dir: data\nllama:\n  binary: ./bin/llama-server\n  models:\n    default:\n      path: models/m.gguf\n", {}, "/srv/app");
    assert.ok(result.ok);
    assert.equal(result.config.app.data_dir, "/srv/app/data");
    assert.equal(result.config.llama.binary, "/srv/app/bin/llama-server");
    assert.equal(result.config.llama.models.default?.path, "/srv/app/models/m.gguf");
  });

  it("takes llama.embedded_binary auto (default) or prebuilt, and names the key for anything else", () => {
    const defaults = parseConfigText("", {}, "/srv/app");
    assert.ok(defaults.ok);
    assert.equal(defaults.config.llama.embedded_binary, "auto");
    const prebuilt = parseConfigText("llama:\n  embedded_binary: prebuilt\n", {}, "/srv/app");
    assert.ok(prebuilt.ok);
    assert.equal(prebuilt.config.llama.embedded_binary, "prebuilt");
    assert.deepEqual(problemsOf("llama:\n  embedded_binary: local\n").map((p) => [p.path, p.line]), [["llama.embedded_binary", 2]]);
  });

  it("keeps a bare binary name for PATH lookup", () => {
    const result = parseConfigText("llama:\n  binary: llama-server\n", {}, "/srv/app");
    assert.ok(result.ok);
    assert.equal(result.config.llama.binary, "llama-server");
  });

  it("substitutes ${ENV}, with fallbacks, and types a whole-value reference", () => {
    const text = "http:\n  port: ${PORT}\n  bearer_token: \"tok-${TOKEN}\"\n  host: ${HOST:-127.0.0.2}\napp:\n  data_dir: \"$${HOME}\"\n";
    const result = parseConfigText(text, { PORT: "9090", TOKEN: "abc" }, "/b");
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.config.http.port, 9090);
    assert.equal(result.config.http.bearer_token, "tok-abc");
    assert.equal(result.config.http.host, "127.0.0.2");
    assert.equal(result.config.app.data_dir, "/b/${HOME}");
  });

  it("does not let an env value change the YAML structure", () => {
    const result = parseConfigText("http:\n  bearer_token: ${TOKEN}\n", { TOKEN: "a\nport: 1" }, "/b");
    assert.ok(result.ok);
    assert.equal(result.config.http.bearer_token, "a\nport: 1");
    assert.equal(result.config.http.port, 8080);
  });

  it("names a missing environment variable with its key and line", () => {
    const [problem] = problemsOf("http:\n  port: 8080\n  bearer_token: ${MISSING_TOKEN}\n");
    assert.equal(problem?.path, "http.bearer_token");
    assert.equal(problem?.line, 3);
    assert.match(problem?.message ?? "", /MISSING_TOKEN is not set/);
  });

  it("gives one problem per mistake with key path, found value, expectation and line", () => {
    const problems = problemsOf("app:\n  max_steps: eight\n  log_level: loud\nhttp:\n  port: 70000\n");
    assert.deepEqual(
      problems.map((p) => [p.path, p.line, p.found]),
      [
        ["app.max_steps", 2, '"eight"'],
        ["app.log_level", 3, '"loud"'],
        ["http.port", 5, "70000"],
      ],
    );
    assert.equal(problems[0]?.message, "must be an integer > 0");
    assert.equal(problems[1]?.message, 'must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"');
  });

  it("reports a misspelt key instead of ignoring it, with the closest key and the accepted ones", () => {
    const [problem] = problemsOf("app:\n  max_step: 3\n");
    assert.equal(problem?.path, "app.max_step");
    assert.equal(problem?.line, 2);
    assert.equal(problem?.message, 'unknown key (did you mean "max_steps"?; accepted here: data_dir, models_dir, log_level, max_steps, max_parse_errors, max_tool_output_bytes)');
    const [nested] = problemsOf("llama:\n  models:\n    m:\n      path: /a.gguf\n      ctx_sise: 10\n");
    assert.equal(nested?.path, "llama.models.m.ctx_sise");
    assert.match(nested?.message ?? "", /^unknown key \(did you mean "ctx_size"\?; accepted here: engine, path, /);
    const [far] = problemsOf("app:\n  zzzzzzzz: 1\n");
    assert.match(far?.message ?? "", /^unknown key \(check the spelling; accepted here: data_dir,/);
  });

  it("says what a key accepts instead of zod's 'Invalid input'", () => {
    const problems = problemsOf("llama:\n  models:\n    m:\n      path: /a.gguf\n      gpu_layers: many\n      parallel: 0\n      threads: -2\n");
    assert.deepEqual(
      problems.map((p) => [p.path, p.message, p.found]),
      [
        ["llama.models.m.gpu_layers", 'must be "auto" or an integer >= 0', '"many"'],
        ["llama.models.m.parallel", "must be an integer >= 1 and <= 64", "0"],
        ["llama.models.m.threads", 'must be "auto" or an integer > 0', "-2"],
      ],
    );
  });

  it("reports YAML syntax errors with their line", () => {
    const [problem] = problemsOf("app:\n  max_steps: 3\n   bad: [\n");
    assert.match(problem?.message ?? "", /YAML syntax/);
    assert.equal(typeof problem?.line, "number");
  });

  it("checks cross-references: engine needs, agent model, port clash", () => {
    const text = [
      "llama:",
      "  models:",
      "    local:",
      "      engine: llama-server",
      "      port: 8080",
      "    remote:",
      "      engine: openai",
      "agents:",
      "  helper:",
      "    model: missing",
    ].join("\n");
    const paths = problemsOf(text).map((p) => p.path).sort();
    assert.deepEqual(paths, ["agents.helper.model", "llama.models.local.path", "llama.models.local.port", "llama.models.remote.base_url"]);
  });

  it("locates the file: --config, then LOCAL_AI_CONFIG, then ./config.yaml", () => {
    assert.deepEqual(locateConfig({ flag: "a.yaml", env: { LOCAL_AI_CONFIG: "/x/b.yaml" }, cwd: "/w" }), { path: "/w/a.yaml", source: "flag" });
    assert.deepEqual(locateConfig({ env: { LOCAL_AI_CONFIG: "/x/b.yaml" }, cwd: "/w" }), { path: "/x/b.yaml", source: "env" });
    assert.deepEqual(locateConfig({ env: {}, cwd: "/w" }), { path: "/w/config.yaml", source: "default" });
  });

  it("reports a missing file as missing and requireConfig maps states to error codes", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "local-ai-config-"));
    const missing = await loadConfig({ env: {}, cwd: dir });
    assert.equal(missing.status, "missing");
    assert.throws(() => requireConfig(missing), (error: unknown) => error instanceof RuntimeError && error.code === "config_missing");
    await writeFile(path.join(dir, "config.yaml"), "app:\n  max_steps: 0\n");
    const invalid = await loadConfig({ env: {}, cwd: dir });
    assert.equal(invalid.status, "invalid");
    assert.throws(
      () => requireConfig(invalid),
      (error: unknown) => error instanceof RuntimeError && error.code === "config_invalid" && /config\.yaml:2: app\.max_steps/.test(error.message),
    );
  });
});
