// doctor and plan weigh each agent's tool schemas against its model's context (built CLI, a real
// MCP server, the tool-mode demo GGUF's own tokenizer and chat template): more than half is a
// warning, no room for a turn fails doctor; the count is the one a chat then meets at run time.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { DoctorReport } from "../../src/diagnostics/doctor-report.js";
import type { PlanReportJson } from "../../src/engine/plan/plan-report-schema.js";
import type { ToolSchemaShare } from "../../src/engine/plan/tool-schema-budget.js";
import { CliProcess } from "../helpers/cli-process.js";
import { configYaml, localModel, mcpServer } from "../helpers/config-yaml.js";
import { runCli } from "../helpers/run-cli.js";
import { everythingServer } from "../helpers/mcp-servers.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

describe("tool schemas against the context (doctor, plan; built CLI)", () => {
  let dir = "";
  let config = "";

  before(async () => {
    const gguf = await ensureFixture("demo", { toolMode: true });
    dir = await mkdtemp(path.join(tmpdir(), "tool-budget-"));
    config = path.join(dir, "config.yaml");
    const everything = everythingServer();
    await writeFile(
      config,
      configYaml({
        app: { data_dir: "./data" },
        llama: { models: { roomy: localModel(gguf, { ctx_size: 4096 }), half: localModel(gguf, { ctx_size: 1024 }), small: localModel(gguf, { ctx_size: 512 }) } },
        agents: {
          fits: { model: "roomy", tools: ["everything/echo"], temperature: 0 },
          over: { model: "half", tools: ["everything/echo"] },
          none: { model: "small", tools: ["*"] },
        },
        mcp: { servers: { everything: mcpServer(everything), broken: mcpServer({ command: process.execPath, args: ["-e", "process.exit(3)"] }) } },
      }),
    );
  });

  after(() => rm(dir, { recursive: true, force: true }));

  it("doctor: ok under half, a warning over half, a failure when no turn fits, and a server that does not start", async () => {
    const run = await runCli(["doctor", "--json", "--config", config], dir);
    const report = JSON.parse(run.stdout) as DoctorReport;
    const check = (id: string): DoctorReport["checks"][number] => {
      const found = report.checks.find((c) => c.id === id);
      assert.ok(found, `${id} in ${report.checks.map((c) => c.id).join(", ")}`);
      return found;
    };
    assert.equal(check("mcp.everything").status, "ok");
    assert.match(check("mcp.everything").finding, /^started and listed \d+ tools$/);
    assert.equal(check("mcp.broken").status, "warn");
    assert.match(check("mcp.broken").finding, /^did not start/);
    const fits = check("agent.fits.tools");
    const over = check("agent.over.tools");
    const none = check("agent.none.tools");
    assert.deepEqual([fits.status, over.status, none.status], ["ok", "warn", "fail"], JSON.stringify([fits, over, none], null, 2));
    const shares = [fits, over, none].map((c) => c.data as unknown as ToolSchemaShare);
    assert.deepEqual(shares.map((s) => [s.window, s.tools > 0, s.counted, s.verdict]), [[4096, true, "tokenizer", "ok"], [1024, true, "tokenizer", "over_half"], [512, true, "tokenizer", "no_room"]]);
    assert.equal(shares[0]!.tool_tokens, shares[1]!.tool_tokens, "the same tool, the same GGUF");
    assert.ok(shares[1]!.tool_tokens > 512 && shares[1]!.tool_tokens < 1024, String(shares[1]!.tool_tokens));
    assert.match(over.finding, /^1 tool takes \d+ tokens of model half's 1024-token context \(\d+%\): more than half the context goes to tool schemas/);
    assert.match(over.fix ?? "", /narrow agents\.over\.tools .* raise llama\.models\.half\.ctx_size/);
    assert.match(none.finding, /every turn is context_overflow/);
    assert.equal(run.code, 1, "a failed check fails doctor");

    // The count is the run time's: a chat of agent none is refused with the same number.
    const proc = new CliProcess(["serve-stdio", "--config", config], { cwd: dir });
    const reply = await proc.request({ id: 1, method: "chat", params: { agent: "none", input: "Hi" } }, 120_000);
    assert.equal(reply.code, "context_overflow", JSON.stringify(reply));
    assert.equal((reply.details as { tool_tokens: number }).tool_tokens, shares[2]!.tool_tokens);
    proc.send({ id: 2, method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });

  it("plan: each model's entry says what its agents' tool schemas take; warnings do not fail the plan", async () => {
    const run = await runCli(["plan", "--json", "--config", config], dir);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as PlanReportJson;
    const verdicts = Object.fromEntries(report.models.map((entry) => [entry.name, (entry.tool_schemas ?? []).map((s) => `${s.agent}:${s.verdict}`)]));
    assert.deepEqual(verdicts, { roomy: ["fits:ok"], half: ["over:over_half"], small: ["none:no_room"] });
    assert.ok(report.notes.some((note) => /^MCP server broken did not start/.test(note)), JSON.stringify(report.notes));
    const text = await runCli(["plan", "--config", config, "--model", "half"], dir);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /warn: agent over: 1 tool takes \d+ tokens of model half's 1024-token context/);
    assert.match(text.stdout, /fix: narrow agents\.over\.tools/);
    assert.doesNotMatch(text.stdout, /agent fits|agent none/, "only the planned model's agents");
  });
});
