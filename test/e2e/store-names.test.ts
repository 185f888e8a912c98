// Ids that differ only by case are two users and two sessions on every disk (issue 25): through
// the built CLI (serve-http in session mode, serve-stdio, doctor) with a scripted OpenAI upstream
// that records what each turn sends the model. On Linux the leak itself cannot happen (the disk
// is case-sensitive), so the folder names are asserted to differ case-insensitively: on macOS and
// Windows, names that do not are one folder.
import assert from "node:assert/strict";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { DoctorReport } from "../../src/diagnostics/doctor-report.js";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { chunk, scripted, listingModel, startUpstream, usageChunk, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";

type Json = Record<string, unknown>;

let upstream: ScriptedUpstream;
let yaml: string;

before(async () => {
  upstream = await startUpstream(
    listingModel("up-model", (req, res, body) => {
      return scripted([chunk({ role: "assistant", content: "" }), chunk({ content: "Noted." }), chunk({}, "stop"), usageChunk(10, 2)])(req, res, body);
    }),
  );
  yaml = configYaml({ llama: { models: { default: openaiModel(upstream.baseUrl, "up-model") } }, agents: { assistant: { system_prompt: "You are the agent." } } });
});

after(async () => {
  await upstream?.close();
});

/** Everything the model was sent (history, memory notes, the new message) in the turn whose new message is `input`. */
function sentWith(input: string): string {
  const found = upstream.requests.filter((request) => {
    const messages = ((request.body as { messages?: Json[] } | undefined)?.messages ?? []).filter((m) => m.role === "user");
    // Memory notes go in front of the new message.
    const last = messages.at(-1)?.content;
    return typeof last === "string" && last.endsWith(input);
  });
  assert.equal(found.length, 1, `one turn sends ${input}`);
  return JSON.stringify((found[0]?.body as Json).messages);
}

/** The names in `dir` compared as macOS and Windows compare them. */
async function assertDistinctCaseInsensitively(dir: string, expected: number): Promise<string[]> {
  const names = (await readdir(dir)).sort();
  assert.equal(names.length, expected, names.join(" "));
  assert.equal(new Set(names.map((name) => name.toLowerCase())).size, names.length, `folders that are one folder on macOS and Windows: ${names.join(" ")}`);
  return names;
}

/** An old-layout session, made by hand: `sessions/<raw user>/<raw session>/history.jsonl`. */
async function oldSession(dataDir: string, user: string, session: string, question: string): Promise<void> {
  const dir = path.join(dataDir, "sessions", user, session);
  await mkdir(dir, { recursive: true });
  const entry = { trace_id: "0123456789abcdef", agent: "assistant", at: "2026-01-01T00:00:00.000Z", messages: [{ role: "user", content: question }, { role: "assistant", content: "Old answer." }] };
  await writeFile(path.join(dir, "history.jsonl"), `${JSON.stringify(entry)}\n`);
}

describe("serve-http session mode: `user` Alice and alice", () => {
  let server: HttpServer;
  before(async () => {
    server = await startHttpServer(yaml);
  });
  after(async () => {
    await server?.stop();
  });

  const chat = async (user: string, sessionId: string, content: string): Promise<Json> => {
    const response = await fetch(`${server.base}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content }], user, session_id: sessionId }),
    });
    const json = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(json));
    return json;
  };

  it("end up in folders whose names differ case-insensitively, and each sees only its own history and memory", async () => {
    await chat("Alice", "s", "alpha-secret one");
    await chat("alice", "s", "beta-secret one");
    await chat("Alice", "s", "alpha two");
    await chat("alice", "s", "beta two");
    await chat("Alice", "other", "alpha three");
    const alice = sentWith("alpha two");
    assert.match(alice, /alpha-secret one/);
    assert.doesNotMatch(alice, /beta-secret/);
    const lower = sentWith("beta two");
    assert.match(lower, /beta-secret one/);
    assert.doesNotMatch(lower, /alpha-secret/);
    // A new session of Alice's: memory may bring her earlier turns, never alice's.
    assert.doesNotMatch(sentWith("alpha three"), /beta-secret/);
    assert.deepEqual(await assertDistinctCaseInsensitively(path.join(server.dir, "data", "sessions"), 2), ["+alice", "alice"]);
  });
});

describe("serve-http on an old data dir", () => {
  it("a session folder an earlier version named `S1` (made by hand in the old layout) resumes with its history, renamed", async () => {
    // Made before the server starts (its store moves old folders on first use, at its start).
    const server = await startHttpServer(yaml, [], {}, (dir) => oldSession(path.join(dir, "data"), "Old_User", "S1", "old-secret question"));
    try {
      const dataDir = path.join(server.dir, "data");
      const response = await fetch(`${server.base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "old follow-up" }], user: "Old_User", session_id: "S1" }),
      });
      const reply = (await response.json()) as { local_ai: Json };
      assert.equal(response.status, 200, JSON.stringify(reply));
      assert.equal(reply.local_ai.session_id, "S1", "the wire keeps the exact id");
      assert.match(sentWith("old follow-up"), /old-secret question/);
      assert.deepEqual(await readdir(path.join(dataDir, "sessions")), ["+old_+user"]);
      assert.deepEqual(await readdir(path.join(dataDir, "sessions", "+old_+user")), ["+s1"]);
    } finally {
      await server.stop();
    }
  });
});

describe("serve-stdio: session_id S1 and s1", () => {
  it("are two sessions in folders whose names differ case-insensitively, each with its own history", async () => {
    // Memory off: one user's sessions share their memory by design; the history is what must not be shared.
    const { dir, configPath } = await tempConfig(configYaml({ llama: { models: { default: openaiModel(upstream.baseUrl, "up-model") } }, agents: { assistant: { memory: false } } }));
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const turn = async (id: string, sessionId: string, input: string): Promise<void> => {
      const reply = await proc.request({ id, method: "chat", params: { session_id: sessionId, input } }, 30_000);
      assert.equal(reply.type, "result", JSON.stringify(reply));
      assert.equal((reply.result as Json).session_id, sessionId);
    };
    await turn("a", "S1", "upper-secret");
    await turn("b", "s1", "lower-secret");
    await turn("c", "S1", "upper again");
    await turn("d", "s1", "lower again");
    assert.match(sentWith("upper again"), /upper-secret/);
    assert.doesNotMatch(sentWith("upper again"), /lower-secret/);
    assert.match(sentWith("lower again"), /lower-secret/);
    assert.doesNotMatch(sentWith("lower again"), /upper-secret/);
    assert.deepEqual(await assertDistinctCaseInsensitively(path.join(dir, "data", "sessions", "default_user"), 2), ["+s1", "s1"]);
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});

describe("local-ai doctor", () => {
  it("reports a pair of folders that collide case-insensitively (an old data dir)", async () => {
    const { dir, configPath } = await tempConfig(yaml);
    await oldSession(path.join(dir, "data"), "Alice", "s1", "a");
    await oldSession(path.join(dir, "data"), "alice", "s1", "b");
    const run = await runCli(["doctor", "--json", "--config", configPath], dir);
    const report = JSON.parse(run.stdout) as DoctorReport;
    const check = report.checks.find((c) => c.id === "store_names");
    assert.equal(check?.status, "warn", JSON.stringify(check));
    assert.deepEqual(check?.data?.["collisions"], [["sessions/Alice", "sessions/alice"]]);
    assert.match(check?.finding ?? "", /sessions\/Alice and sessions\/alice/);
    assert.match(check?.fix ?? "", /start local-ai once/);
  });
});
