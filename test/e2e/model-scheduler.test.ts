// The memory-budgeted scheduler on the built CLI with real embedded models (three generated
// GGUF models, a budget that fits two): LRU eviction, a load that waits for a busy model
// (model_load queued), pins, model_too_large before any load, busy past the queue timeout, `ps`.
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer } from "../helpers/http-cli-server.js";
import { procMemory } from "../helpers/proc-memory.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";

const LOAD_MS = 60_000;

interface PsModel {
  name: string;
  status: string;
  memory: { ram_bytes: number; vram_bytes: number; measured: boolean };
  pinned: boolean;
  in_flight: number;
}
interface PsResult {
  budget: { ram_bytes: number; used_ram_bytes: number };
  models: PsModel[];
}

describe("model scheduler under a memory budget (built CLI, embedded engine)", () => {
  let tiny = "";
  let bench = "";
  /** One loaded tiny model as the scheduler counts it (the larger of plan's estimate and the measured figure). */
  let perModel = 0;
  const dirs: string[] = [];
  const procs: CliProcess[] = [];

  /** Three tiny models (ma, mb, mc), a bigger one, and agents: short turns and long ones (the tiny model never stops by itself). */
  const yaml = (budgetBytes: number, llama: Record<string, unknown> = {}, pinA = false): string =>
    configYaml({
      app: { data_dir: "./data", log_level: "info" },
      llama: {
        memory_budget: { ram: budgetBytes, vram: 0 },
        ...llama,
        models: {
          ma: localModel(tiny, { ctx_size: 4096, parallel: 1, gpu_layers: 0, pin: pinA }),
          mb: localModel(tiny, { ctx_size: 4096, parallel: 1, gpu_layers: 0 }),
          mc: localModel(tiny, { ctx_size: 4096, parallel: 1, gpu_layers: 0 }),
          big: localModel(bench, { ctx_size: 4096, parallel: 1, gpu_layers: 0 }),
        },
      },
      agents: {
        a: { model: "ma", temperature: 0, max_tokens: 4, memory: false },
        b: { model: "mb", temperature: 0, max_tokens: 4, memory: false },
        c: { model: "mc", temperature: 0, max_tokens: 4, memory: false },
        a_long: { model: "ma", temperature: 0, max_tokens: 3500, memory: false },
        b_long: { model: "mb", temperature: 0, max_tokens: 3500, memory: false },
        huge: { model: "big", temperature: 0, max_tokens: 4, memory: false },
      },
    });

  /** The same config without its `app` section (startHttpServer writes one). */
  const httpYaml = (budgetBytes: number): string => yaml(budgetBytes).replace(/^app:\n(?: {2}.*\n)+/, "");
  const serve = async (text: string): Promise<CliProcess> => {
    const { dir, configPath } = await tempConfig();
    dirs.push(dir);
    const { writeFile } = await import("node:fs/promises");
    await writeFile(configPath, text);
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "info" } });
    procs.push(proc);
    return proc;
  };
  const ps = async (proc: CliProcess, id: string): Promise<PsResult> => {
    const reply = await proc.request({ id, method: "ps" }, LOAD_MS);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    return reply.result as PsResult;
  };
  const statuses = (report: PsResult): Record<string, string> => Object.fromEntries(report.models.map((model) => [model.name, model.status]));
  const chat = async (proc: CliProcess, id: string, agent: string): Promise<WireMessage> => {
    const reply = await proc.request({ id, method: "chat", params: { agent, input: "hello" } }, LOAD_MS);
    assert.equal(reply.type, "result", `${id}: ${JSON.stringify(reply)}; stderr: ${proc.stderr.slice(-1500)}`);
    return reply;
  };
  /** The models the scheduler unloaded to make room, in order (from the log on stderr). */
  const unloaded = (proc: CliProcess): string[] =>
    proc.stderr
      .split("\n")
      .filter((line) => line.includes('"msg":"model unloaded"') && line.includes("making room for"))
      .map((line) => (JSON.parse(line) as { model: string }).model);
  const stop = async (proc: CliProcess): Promise<void> => {
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  };

  before(async () => {
    [tiny, bench] = await Promise.all([ensureFixture("tiny", { seed: 3 }), ensureFixture("bench")]);
    // What one tiny model counts for once loaded: measured on a first process with a roomy budget.
    const probe = await serve(yaml(1024 ** 4));
    await chat(probe, "p1", "a");
    const report = await ps(probe, "p2");
    const ma = report.models.find((model) => model.name === "ma");
    assert.ok(ma !== undefined && ma.status === "loaded" && ma.memory.measured, JSON.stringify(report));
    perModel = ma.memory.ram_bytes;
    await stop(probe);
  });
  after(async () => {
    for (const proc of procs) proc.kill("SIGKILL");
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("A, B, then C unloads A; a load waits (model_load queued) while both loaded models run, and never unloads a busy one", async () => {
    const budget = Math.floor(perModel * 2.5);
    const proc = await serve(yaml(budget));
    await chat(proc, "a1", "a");
    await chat(proc, "b1", "b");
    assert.deepEqual(unloaded(proc), []);
    await chat(proc, "c1", "c");
    assert.deepEqual(unloaded(proc), ["ma"], "A, the least recently used, made room for C");
    let report = await ps(proc, "ps1");
    assert.deepEqual(statuses(report), { ma: "unloaded", mb: "loaded", mc: "loaded", big: "unloaded" });
    assert.ok(report.budget.used_ram_bytes <= budget && report.budget.ram_bytes === budget, JSON.stringify(report.budget));

    // Long turns on B (loaded) and A (C is idle, so it goes for A): both loaded models are busy.
    proc.send({ id: "long-b", method: "chat", params: { agent: "b_long", input: "talk" } });
    await proc.waitFor((message) => message.id === "long-b" && message.event === "llm_chunk", LOAD_MS);
    proc.send({ id: "long-a", method: "chat", params: { agent: "a_long", input: "talk" } });
    await proc.waitFor((message) => message.id === "long-a" && message.event === "llm_chunk", LOAD_MS);
    assert.deepEqual(unloaded(proc), ["ma", "mc"]);
    // C now waits: nothing idle to unload.
    proc.send({ id: "c2", method: "chat", params: { agent: "c", input: "hello" } });
    const queued = await proc.waitFor((message) => message.id === "c2" && message.event === "model_load", LOAD_MS);
    assert.deepEqual(queued, { id: "c2", type: "event", event: "model_load", step: 0, model: "mc", state: "queued" });
    report = await ps(proc, "ps2");
    assert.deepEqual(statuses(report), { ma: "loaded", mb: "loaded", mc: "queued", big: "unloaded" });
    assert.deepEqual(report.models.filter((model) => model.in_flight > 0).map((model) => model.name), ["ma", "mb", "mc"]);
    // A's turn ends (cancelled): A is idle, so C unloads it and runs; B's turn goes on, B stays loaded.
    assert.equal((await proc.request({ id: "x1", method: "cancel", params: { request_id: "long-a" } })).type, "result");
    const c2 = await proc.waitFor((message) => message.id === "c2" && (message.type === "result" || message.type === "error"), LOAD_MS);
    assert.equal(c2.type, "result", JSON.stringify(c2));
    // The load's progress reports (loading with `progress`) left out: how many node-llama-cpp sends varies.
    const c2Events = proc.messages.filter((message) => message.id === "c2" && message.event === "model_load" && message.progress === undefined).map((message) => [message.state, message.unloading]);
    assert.deepEqual(c2Events, [["queued", undefined], ["queued", ["ma"]], ["loading", undefined], ["loaded", undefined]]);
    assert.deepEqual(unloaded(proc), ["ma", "mc", "ma"], "B, busy all along, was never unloaded");
    assert.equal(proc.messages.some((message) => message.id === "long-b" && message.type !== "event"), false, "B's turn still runs");
    assert.equal((await proc.request({ id: "x2", method: "cancel", params: { request_id: "long-b" } })).type, "result");
    const longB = await proc.waitFor((message) => message.id === "long-b" && message.type === "error", LOAD_MS);
    assert.equal(longB.code, "cancelled");
    report = await ps(proc, "ps3");
    assert.deepEqual(statuses(report), { ma: "unloaded", mb: "loaded", mc: "loaded", big: "unloaded" });
    assert.ok(report.budget.used_ram_bytes <= budget);
    await stop(proc);
  });

  it("a pinned model survives while the unpinned ones make room", async () => {
    const proc = await serve(yaml(Math.floor(perModel * 2.5), {}, true));
    await chat(proc, "a1", "a");
    await chat(proc, "b1", "b");
    await chat(proc, "c1", "c");
    await chat(proc, "a2", "a");
    await chat(proc, "b2", "b");
    assert.deepEqual(unloaded(proc), ["mb", "mc"], "A (pinned, least recently used at first) is never the one unloaded");
    const report = await ps(proc, "ps");
    assert.deepEqual(statuses(report), { ma: "loaded", mb: "loaded", mc: "unloaded", big: "unloaded" });
    assert.equal(report.models.find((model) => model.name === "ma")?.pinned, true);
    await stop(proc);
  });

  it("keep_alive: 0 unloads the model once the turn is over, -1 keeps it past idle_unload_s; warm_up takes it too", async () => {
    const proc = await serve(yaml(Math.floor(perModel * 2.5), { idle_unload_s: 1 }));
    const reply = await proc.request({ id: "k1", method: "chat", params: { agent: "a", input: "hello", keep_alive: 0 } }, LOAD_MS);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    await proc.waitForStderr(/"model":"ma","reason":"idle for 0 s \(keep_alive\)"[^\n]*"msg":"model unloaded"/, LOAD_MS);
    assert.equal(statuses(await ps(proc, "ps1")).ma, "unloaded");
    // -1: never unloaded on idle, though llama.idle_unload_s is 1 s; expires_at says so.
    const warm = await proc.request({ id: "w1", method: "warm_up", params: { agent: "b", keep_alive: -1 } }, LOAD_MS);
    assert.equal(warm.type, "result", JSON.stringify(warm));
    const kept = (await ps(proc, "ps2")).models.find((model) => model.name === "mb") as PsModel & { expires_at: string | null };
    assert.deepEqual([kept.status, kept.expires_at], ["loaded", null]);
    // Without keep_alive the model's idle_unload_s (here llama.idle_unload_s: 1) applies again.
    await chat(proc, "k2", "b");
    const timed = (await ps(proc, "ps3")).models.find((model) => model.name === "mb") as PsModel & { expires_at: string | null };
    assert.equal(typeof timed.expires_at, "string");
    await proc.waitForStderr(/"model":"mb","reason":"idle for 1 s \(idle_unload_s\)"/, LOAD_MS);
    await stop(proc);
  });

  it("an embedded model unloaded for another keeps its sessions' KV state: the next turn after the reload reports the earlier prompt as cached", async () => {
    const proc = await serve(yaml(Math.floor(perModel * 1.5)));
    const usageOf = (id: string): WireMessage => proc.messages.find((message) => message.id === id && message.event === "usage") as WireMessage;
    const turn = async (id: string, agent: string, session: string, input: string): Promise<WireMessage> => {
      const reply = await proc.request({ id, method: "chat", params: { agent, session_id: session, input } }, LOAD_MS);
      assert.equal(reply.type, "result", JSON.stringify(reply));
      return usageOf(id);
    };
    const before = await turn("s1", "a", "kept", "Tell me about apples");
    await turn("s2", "b", "other", "Tell me about boats");
    assert.deepEqual(unloaded(proc), ["ma"], "A was unloaded for B (a budget of one)");
    const after = await turn("s3", "a", "kept", "And pears?");
    assert.deepEqual(unloaded(proc), ["ma", "mb"]);
    const cached = Number(after.cached_input_tokens ?? 0);
    assert.ok(cached >= Number(before.input_tokens), `cached ${cached}; the first turn's prompt was ${String(before.input_tokens)} tokens`);
    assert.ok(cached < Number(after.input_tokens), "the new input is evaluated");
    await stop(proc);
  });

  it("refuses a model bigger than the budget with model_too_large before loading it, and a queued load past timeout_s with busy", async () => {
    const budget = Math.floor(perModel * 2.5);
    const proc = await serve(yaml(budget, { load_queue: { length: 4, timeout_s: 1 } }));
    const huge = await proc.request({ id: "h1", method: "chat", params: { agent: "huge", input: "hello" } }, LOAD_MS);
    assert.equal(huge.type, "error", JSON.stringify(huge));
    assert.equal(huge.code, "model_too_large");
    assert.match(String(huge.message), /Model "big" needs .* of RAM, more than the whole budget of .* \(llama.memory_budget\)/);
    assert.deepEqual(proc.messages.filter((message) => message.id === "h1" && message.event === "model_load"), [], "refused before any load or wait");
    assert.equal(statuses(await ps(proc, "ps1")).big, "unloaded");

    proc.send({ id: "long-a", method: "chat", params: { agent: "a_long", input: "talk" } });
    await proc.waitFor((message) => message.id === "long-a" && message.event === "llm_chunk", LOAD_MS);
    proc.send({ id: "long-b", method: "chat", params: { agent: "b_long", input: "talk" } });
    await proc.waitFor((message) => message.id === "long-b" && message.event === "llm_chunk", LOAD_MS);
    const refused = await proc.request({ id: "c1", method: "chat", params: { agent: "c", input: "hello" } }, LOAD_MS);
    assert.equal(refused.type, "error", JSON.stringify(refused));
    assert.equal(refused.code, "busy");
    assert.match(String(refused.message), /Model "mc" waited 1 s for memory \(llama.load_queue.timeout_s\) while ma, mb were in use/);
    assert.ok(proc.messages.some((message) => message.id === "c1" && message.event === "model_load" && message.state === "queued"));
    for (const id of ["long-a", "long-b"]) await proc.request({ id: `x-${id}`, method: "cancel", params: { request_id: id } });
    await proc.waitFor((message) => message.id === "long-b" && message.type === "error", LOAD_MS);
    await stop(proc);
  });

  it("serve-http: GET /v1/ps lists the loaded models, /v1/models and /health carry the scheduler's view, `local-ai ps` prints the table", async () => {
    const budget = Math.floor(perModel * 2.5);
    const server = await startHttpServer(httpYaml(budget));
    try {
      // serve-http warmed up the default agent's model (a -> ma); a chat for agent b loads mb.
      const chat = await fetch(`${server.base}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "b", messages: [{ role: "user", content: "hi" }] }) });
      assert.equal(chat.status, 200, await chat.clone().text());
      const ps = (await (await fetch(`${server.base}/v1/ps`)).json()) as { object: string; data: Array<{ id: string; status: string; memory: { ram_bytes: number; measured: boolean }; pinned: boolean; in_flight: number; expires_at: string | null }> };
      assert.equal(ps.object, "list");
      assert.deepEqual(ps.data.map((entry) => [entry.id, entry.status, entry.memory.measured, entry.pinned, entry.in_flight, entry.expires_at]), [["ma", "loaded", true, false, 0, null], ["mb", "loaded", true, false, 0, null]]);
      const models = (await (await fetch(`${server.base}/v1/models`)).json()) as { data: Array<{ id: string; status?: string; memory?: unknown }> };
      assert.deepEqual(Object.fromEntries(models.data.map((entry) => [entry.id, entry.status])), { a: "loaded", b: "loaded", c: "unloaded", a_long: "loaded", b_long: "loaded", huge: "unloaded" });
      const health = (await (await fetch(`${server.base}/health`)).json()) as { memory: { budget_ram_bytes: number; used_ram_bytes: number } };
      assert.equal(health.memory.budget_ram_bytes, budget);
      assert.equal(health.memory.used_ram_bytes, ps.data.reduce((sum, entry) => sum + entry.memory.ram_bytes, 0));
      const table = await runCli(["ps", "--url", server.base], server.dir);
      assert.equal(table.code, 0, table.stderr);
      const lines = table.stdout.trimEnd().split("\n");
      assert.match(lines[0] ?? "", /^NAME +SIZE +PROCESSOR +CONTEXT +UNTIL$/);
      assert.deepEqual(lines.slice(1).map((line) => line.split(/ {3,}/)[0]), ["ma", "mb"]);
      assert.match(lines[1] ?? "", /^ma +[\d.]+ [KMG]iB +100% CPU +\d+ +Forever$/);
      const json = await runCli(["ps", "--url", server.base, "--json"], server.dir);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual((JSON.parse(json.stdout) as typeof ps).data.map((entry) => entry.id), ["ma", "mb"]);
    } finally {
      await server.stop();
    }
  });

  it("30 concurrent requests over the three models (15 over stdio, 15 over HTTP): all answered alike, the accounting and the measured RSS within the budget", async (t) => {
    const budget = Math.floor(perModel * 2.5);
    /** What one tiny model answers "hello" at temperature 0 (the three are the same file). */
    const probe = await serve(yaml(budget));
    const reference = ((await chat(probe, "r", "a")).result as { response: string }).response;
    await stop(probe);
    const agents = ["a", "b", "c"];
    /** The largest accounting any admission logged, and it never passed the budget. */
    const admissions = (stderr: string): number[] =>
      stderr
        .split("\n")
        .filter((line) => line.includes('"msg":"model load admitted"'))
        .map((line) => (JSON.parse(line) as { used_ram_bytes: number }).used_ram_bytes);
    /** Samples the process's RSS from /proc while `work` runs (a measurement, not a synchronization). */
    const peakRss = async (pid: number, work: Promise<unknown>): Promise<{ baseline: number; peak: number }> => {
      const baseline = (await procMemory(pid))?.rssMiB ?? 0;
      let peak = baseline;
      let done = false;
      void work.finally(() => (done = true));
      while (!done) {
        peak = Math.max(peak, (await procMemory(pid))?.rssMiB ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return { baseline, peak: Math.max(peak, (await procMemory(pid))?.rssMiB ?? 0) };
    };
    /** The stated margin over baseline + budget: node-llama-cpp's per-context buffers the estimate leaves out on a tiny model, and heap churn. */
    const MARGIN_MIB = 96;

    const proc = await serve(yaml(budget));
    // The baseline includes node-llama-cpp itself (ps plans the models, which loads it), not the models.
    await ps(proc, "ps0");
    const stdioWork = Promise.all(Array.from({ length: 15 }, (_, index) => proc.request({ id: `q${index}`, method: "chat", params: { agent: agents[index % 3], input: "hello" } }, 120_000)));
    const stdioRss = await peakRss(proc.child.pid as number, stdioWork);
    const stdioReplies = await stdioWork;
    assert.deepEqual(stdioReplies.map((reply) => [reply.type, (reply.result as { response?: string } | undefined)?.response]), stdioReplies.map(() => ["result", reference]));
    const stdioUsed = admissions(proc.stderr);
    assert.ok(stdioUsed.length >= 3 && Math.max(...stdioUsed) <= budget, `accounted ${stdioUsed.join(", ")} against a budget of ${budget}`);
    assert.ok(stdioRss.peak <= stdioRss.baseline + budget / 1024 / 1024 + MARGIN_MIB, `RSS ${stdioRss.peak.toFixed(1)} MiB from ${stdioRss.baseline.toFixed(1)} MiB`);
    t.diagnostic(`stdio: budget ${(budget / 1024 / 1024).toFixed(1)} MiB, accounted at most ${(Math.max(...stdioUsed) / 1024 / 1024).toFixed(1)} MiB, RSS ${stdioRss.baseline.toFixed(1)} -> peak ${stdioRss.peak.toFixed(1)} MiB`);
    await stop(proc);

    const server = await startHttpServer(httpYaml(budget), [], { LOCAL_AI_LOG_LEVEL: "info" });
    try {
      const httpWork = Promise.all(
        Array.from({ length: 15 }, async (_, index) => {
          const response = await fetch(`${server.base}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: agents[index % 3], messages: [{ role: "user", content: "hello" }] }) });
          return { status: response.status, body: (await response.json()) as { choices?: Array<{ message: { content: string } }> } };
        }),
      );
      const httpRss = await peakRss(server.proc.child.pid as number, httpWork);
      const httpReplies = await httpWork;
      assert.deepEqual(httpReplies.map((reply) => [reply.status, reply.body.choices?.[0]?.message.content]), httpReplies.map(() => [200, reference]));
      const httpUsed = admissions(server.proc.stderr);
      assert.ok(httpUsed.length >= 3 && Math.max(...httpUsed) <= budget, `accounted ${httpUsed.join(", ")} against a budget of ${budget}`);
      assert.ok(httpRss.peak <= httpRss.baseline + budget / 1024 / 1024 + MARGIN_MIB, `RSS ${httpRss.peak.toFixed(1)} MiB from ${httpRss.baseline.toFixed(1)} MiB`);
      t.diagnostic(`http: accounted at most ${(Math.max(...httpUsed) / 1024 / 1024).toFixed(1)} MiB, RSS ${httpRss.baseline.toFixed(1)} -> peak ${httpRss.peak.toFixed(1)} MiB`);
    } finally {
      await server.stop();
    }
  });
});
