// The stdio `pull` and `unload` methods, `download: auto` and `idle_unload_s`, on the built CLI:
// models come from a loopback server with Range support; the loaded ones are real (node-llama-cpp).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { fileSource, ModelFileServer, virtualSource } from "../helpers/model-file-server.js";
import { PULL_FIXTURE_SHAPE, partialFileKeptRanges } from "../helpers/pull-fixtures.js";
import { tempConfig } from "../helpers/temp-config.js";
import { hugeModel } from "../helpers/virtual-models.js";
import { waitUntil } from "../helpers/wait-until.js";

const MiB = 1024 * 1024;
/** A pull reads the header, loads node-llama-cpp for the fit check and downloads: slow on a shared CPU. */
const PULL_TIMEOUT_MS = 120_000;

describe("stdio pull, unload, download: auto, idle_unload_s (built CLI)", () => {
  let server: ModelFileServer;
  let big = "";
  let bigSize = 0;
  let bigUrl = "";
  let tinyUrl = "";
  let tinySize = 0;
  let demoPath = "";
  const dirs: string[] = [];
  const sha = async (file: string): Promise<string> => createHash("sha256").update(await readFile(file)).digest("hex");
  const serve = async (yaml: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ proc: CliProcess; dir: string }> => {
    const { dir, configPath } = await tempConfig(yaml);
    dirs.push(dir);
    // HF_HOME: no token file of the developer's is read.
    return { proc: new CliProcess(["serve-stdio", "--config", configPath, ...args], { env: { HF_HOME: dir, ...env } }), dir };
  };
  const events = (proc: CliProcess, id: string): WireMessage[] => proc.messages.filter((message) => message.id === id && message.type === "event");

  before(async () => {
    const tiny = await ensureFixture("tiny");
    [big, demoPath] = await Promise.all([ensureFixture("bench", { shape: PULL_FIXTURE_SHAPE }), ensureFixture("demo")]);
    bigSize = (await stat(big)).size;
    tinySize = (await stat(tiny)).size;
    server = await ModelFileServer.start();
    bigUrl = server.serve("/files/v1/pull-model.gguf", fileSource(big, bigSize));
    tinyUrl = server.serve("/files/v1/tiny.gguf", fileSource(tiny, tinySize));
    server.serveHub("owner", "Tiny-GGUF", "tiny.Q8_0.gguf", fileSource(tiny, tinySize), "Q8_0");
    const huge = hugeModel();
    server.serve("/files/v1/huge.gguf", virtualSource(huge.header, huge.totalBytes));
  });
  after(async () => {
    await server.close();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("pull streams pull_progress events and answers {path, bytes}; stdout carries only protocol messages", async () => {
    const { proc, dir } = await serve("  models_dir: ./models\n");
    const init = await proc.request({ id: "i", method: "initialize", params: { protocol_versions: [1] } });
    const methods = (init.result as { capabilities: { methods: string[] } }).capabilities.methods;
    assert.ok(methods.includes("pull") && methods.includes("unload"), JSON.stringify(methods));

    const result = await proc.request({ id: "p1", method: "pull", params: { ref: bigUrl, force: false } }, PULL_TIMEOUT_MS);
    const target = path.join(dir, "models", "pull-model.gguf");
    assert.deepEqual(result, { id: "p1", type: "result", result: { path: target, bytes: bigSize } });
    const progress = events(proc, "p1");
    assert.ok(progress.length >= 2, "progress while downloading, and at the end");
    for (const event of progress) assert.deepEqual(Object.keys(event), ["id", "type", "event", "downloaded_bytes", "total_bytes"]);
    assert.ok(progress.every((event) => event.event === "pull_progress" && event.total_bytes === bigSize));
    const downloaded = progress.map((event) => event.downloaded_bytes as number);
    assert.deepEqual(downloaded, [...downloaded].sort((a, b) => a - b), "never goes backwards");
    assert.equal(downloaded.at(-1), bigSize, "the last event has every byte");
    assert.equal(await sha(target), await sha(big));
    proc.endInput();
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("cancel mid-pull answers cancelled and keeps the partial file; the next pull fetches only the rest", async () => {
    const { proc, dir } = await serve("  models_dir: ./models\n");
    const target = path.join(dir, "models", "pull-model.gguf");
    const cut = 20 * MiB;
    server.reset();
    server.cutAt(cut);
    try {
      proc.send({ id: "p1", method: "pull", params: { ref: bigUrl } });
      // Every stream stalls at the cut; once progress shows all the bytes sent for the download
      // (the first ranged read is the fit check's), the finished chunks are recorded.
      const sentForDownload = (): number => server.requests.filter((request) => request.status === 206).slice(1).reduce((sum, request) => sum + request.bytes, 0);
      await waitUntil(
        () => server.holding >= 3 && sentForDownload() >= cut / 2 && events(proc, "p1").at(-1)?.downloaded_bytes === sentForDownload(),
        [{ emitter: server, event: "hold" }, { emitter: proc.child.stdout, event: "data" }],
        PULL_TIMEOUT_MS,
        () => `holding ${server.holding}, sent ${sentForDownload()}, events ${JSON.stringify(events(proc, "p1").slice(-3))}`,
      );
      assert.deepEqual(await proc.request({ id: "c", method: "cancel", params: { request_id: "p1" } }), { id: "c", type: "result", result: { status: "ok" } });
      const cancelled = await proc.response("p1");
      assert.equal(cancelled.type, "error");
      assert.equal(cancelled.code, "cancelled");
      assert.deepEqual(cancelled.details, { partial: `${target}.ipull` });
    } finally {
      server.cutAt(null);
    }
    const kept = await partialFileKeptRanges(`${target}.ipull`, bigSize);
    assert.ok(kept.length > 0);

    server.reset();
    const again = await proc.request({ id: "p2", method: "pull", params: { ref: bigUrl } }, PULL_TIMEOUT_MS);
    assert.deepEqual(again.result, { path: target, bytes: bigSize });
    assert.equal(await sha(target), await sha(big));
    for (const request of server.requests.filter((item) => item.status === 206).slice(1)) {
      const [start, end] = (request.range ?? "").replace("bytes=", "").split("-").map(Number) as [number, number];
      assert.ok(kept.every((range) => end < range.start || start >= range.end), `${request.range} asks again for a kept chunk ${JSON.stringify(kept)}`);
    }
    assert.ok((events(proc, "p2")[0]?.downloaded_bytes as number) > 0, "the first progress of the resumed pull counts what was kept");
    assert.deepEqual(protocolViolations(proc), []);
    proc.endInput();
    await proc.exited;
  });

  it("refuses a model that does not fit with model_plan_error before any download", async () => {
    const { proc, dir } = await serve("  models_dir: ./models\n");
    server.reset();
    const refused = await proc.request({ id: "p", method: "pull", params: { ref: `${server.origin}/files/v1/huge.gguf` } }, PULL_TIMEOUT_MS);
    assert.equal(refused.type, "error");
    assert.equal(refused.code, "model_plan_error");
    assert.match(refused.message as string, /^Not downloading .*huge\.gguf: Model default does not fit on this machine.*\(--force, or force: true, downloads it anyway\)$/s);
    const details = refused.details as { reason: string; ref: string; alternatives: unknown[]; model: { parameters: number } };
    assert.equal(details.reason, "does_not_fit");
    assert.ok(details.alternatives.length > 0);
    assert.ok(details.model.parameters > 1e11);
    assert.equal(events(proc, "p").length, 0, "no download, no progress");
    assert.equal(existsSync(path.join(dir, "models")), false);
    assert.equal(server.bytesServed().whole, 0);
    proc.endInput();
    await proc.exited;
  });

  it("an hf: pull through HF_ENDPOINT keeps stdout clean even when node-llama-cpp prints (a rate-limited manifest)", async () => {
    const { proc, dir } = await serve("  models_dir: ./models\n", [], { HF_ENDPOINT: server.origin, LOCAL_AI_LOG_LEVEL: "info" });
    server.rateLimitManifests(1);
    const result = await proc.request({ id: "h", method: "pull", params: { ref: "hf:owner/Tiny-GGUF:Q8_0" } }, PULL_TIMEOUT_MS);
    assert.deepEqual(result.result, { path: path.join(dir, "models", "hf_owner_Tiny.Q8_0.gguf"), bytes: tinySize });
    assert.match(proc.stderr, /Received a rate limit response from Hugging Face/, "node-llama-cpp's console notice went to the log");
    proc.endInput();
    await proc.exited;
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("JSON-RPC carries the progress as $/event notifications", async () => {
    const { proc, dir } = await serve("  models_dir: ./models\n", ["--protocol", "jsonrpc"]);
    proc.send({ jsonrpc: "2.0", id: 7, method: "pull", params: { ref: tinyUrl } });
    const answer = (await proc.waitFor((message) => (message as { id?: unknown }).id === 7, PULL_TIMEOUT_MS)) as unknown as { result?: { path: string; bytes: number } };
    assert.deepEqual(answer.result, { path: path.join(dir, "models", "tiny.gguf"), bytes: tinySize });
    const notifications = proc.messages.filter((message) => (message as { method?: string }).method === "$/event") as unknown as Array<{ params: Record<string, unknown> }>;
    assert.ok(notifications.length > 0);
    for (const { params } of notifications) {
      assert.deepEqual(Object.keys(params), ["request_id", "event", "downloaded_bytes", "total_bytes"]);
      assert.equal(params.request_id, 7);
      assert.equal(params.event, "pull_progress");
    }
    assert.equal(notifications.at(-1)?.params.downloaded_bytes, tinySize);
    proc.endInput();
    await proc.exited;
  });

  it("a configured reference not downloaded is model_missing with the pull fix; download: auto fetches it at warm_up", async () => {
    const model = (extra: string): string => `  models_dir: ./models\nllama:\n  models:\n    default:\n      path: ${tinyUrl}\n      threads: 1\n      ctx_size: 512\n${extra}agents:\n  talker:\n    max_tokens: 2\n`;
    const never = await serve(model(""));
    const missing = await never.proc.request({ id: "c", method: "chat", params: { input: "hi" } }, PULL_TIMEOUT_MS);
    assert.equal(missing.code, "model_missing");
    assert.match(missing.message as string, new RegExp(`^llama\\.models\\.default\\.path: ${tinyUrl.replace(/[.]/g, "\\.")} is not downloaded yet; run \`local-ai pull ${tinyUrl.replace(/[.]/g, "\\.")}\``));
    assert.equal((missing.details as { fix?: string }).fix, `local-ai pull ${tinyUrl}`);
    never.proc.endInput();
    await never.proc.exited;

    const auto = await serve(model("      download: auto\n"));
    const warm = await auto.proc.request({ id: "w", method: "warm_up", params: {} }, PULL_TIMEOUT_MS);
    assert.equal(warm.type, "result", JSON.stringify(warm));
    // The load (model_load, docs/models.md) starts with the download: its progress comes inside
    // the load's events, and `loaded` after the last byte.
    const warmEvents = events(auto.proc, "w");
    const progress = warmEvents.filter((event) => event.event === "pull_progress");
    const loads = warmEvents.filter((event) => event.event === "model_load");
    assert.deepEqual(new Set(warmEvents.map((event) => event.event)), new Set(["pull_progress", "model_load"]));
    assert.ok(progress.length > 0);
    assert.ok(warmEvents.findLastIndex((event) => event.event === "pull_progress") < warmEvents.findIndex((event) => event.event === "model_load" && event.state === "loaded"));
    assert.equal(progress.at(-1)?.downloaded_bytes, tinySize);
    assert.equal(loads.at(-1)?.state, "loaded");
    assert.deepEqual(await readdir(path.join(auto.dir, "models")), ["tiny.gguf"]);
    auto.proc.endInput();
    await auto.proc.exited;
  });

  it("unload frees a loaded model and the next chat loads it again; doctor shows what is loaded and its memory", async () => {
    const { proc } = await serve(`llama:\n  models:\n    default:\n      path: ${JSON.stringify(demoPath)}\n      threads: 1\n      ctx_size: 2048\nagents:\n  assistant:\n    temperature: 0\n`);
    const loaded = (report: WireMessage): { finding: string; data: { models: Record<string, { loaded: boolean; memory_bytes?: number }> } } =>
      (report.result as { checks: Array<{ id: string; finding: string; data: { models: Record<string, { loaded: boolean; memory_bytes?: number }> } }> }).checks.find((check) => check.id === "models.loaded") as never;

    const before = loaded(await proc.request({ id: "d0", method: "doctor" }, PULL_TIMEOUT_MS));
    assert.equal(before.finding, "no model is loaded in this process (models load on first use)");
    assert.equal((await proc.request({ id: "w", method: "warm_up" }, PULL_TIMEOUT_MS)).type, "result");
    const during = loaded(await proc.request({ id: "d1", method: "doctor" }, PULL_TIMEOUT_MS));
    assert.equal(during.data.models.default?.loaded, true);
    assert.ok((during.data.models.default?.memory_bytes ?? 0) > 0);
    // The model's memory, then the scheduler's budget and its use (docs/models.md).
    assert.match(during.finding, /^default \(\d+(\.\d)? [KM]iB\); budget: \d+(\.\d)? [KMG]?i?B of \d+(\.\d)? [KMG]?i?B RAM, \d+(\.\d)? [KMG]?i?B of \d+(\.\d)? [KMG]?i?B VRAM in use$/);

    assert.deepEqual(await proc.request({ id: "u1", method: "unload", params: {} }), { id: "u1", type: "result", result: { unloaded: ["default"] } });
    assert.deepEqual(await proc.request({ id: "u2", method: "unload", params: { model: "default" } }), { id: "u2", type: "result", result: { unloaded: [] } });
    const unknown = await proc.request({ id: "u3", method: "unload", params: { model: "other" } });
    assert.equal(unknown.code, "invalid_request");
    assert.match(unknown.message as string, /Unknown model "other"; configured models: default/);
    assert.equal(loaded(await proc.request({ id: "d2", method: "doctor" }, PULL_TIMEOUT_MS)).data.models.default?.loaded, false);

    const chat = await proc.request({ id: "c", method: "chat", params: { input: "Hello!" } }, PULL_TIMEOUT_MS);
    assert.equal(chat.type, "result", JSON.stringify(chat));
    assert.equal(loaded(await proc.request({ id: "d3", method: "doctor" }, PULL_TIMEOUT_MS)).data.models.default?.loaded, true, "loaded again by the chat");
    proc.endInput();
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("idle_unload_s unloads a model nobody uses", async () => {
    const { proc } = await serve(`  log_level: info\nllama:\n  models:\n    default:\n      path: ${JSON.stringify(demoPath)}\n      threads: 1\n      ctx_size: 2048\n      idle_unload_s: 1\nagents:\n  assistant:\n    temperature: 0\n`, [], { LOCAL_AI_LOG_LEVEL: "info" });
    const warm = await proc.request({ id: "w", method: "warm_up" }, PULL_TIMEOUT_MS);
    assert.equal(warm.type, "result", JSON.stringify(warm));
    // The unload is logged (stderr); wait for that line, not for a time.
    await waitUntil(
      () => /"msg":"model unloaded"/.test(proc.stderr) && /idle for 1 s \(idle_unload_s\)/.test(proc.stderr),
      [{ emitter: proc.child.stderr, event: "data" }],
      60_000,
      () => proc.stderr.slice(-2000),
    );
    const report = await proc.request({ id: "d", method: "doctor" }, PULL_TIMEOUT_MS);
    const check = (report.result as { checks: Array<{ id: string; data: { models: Record<string, { loaded: boolean }> } }> }).checks.find((item) => item.id === "models.loaded");
    assert.equal(check?.data.models.default?.loaded, false);
    proc.endInput();
    await proc.exited;
  });
});
