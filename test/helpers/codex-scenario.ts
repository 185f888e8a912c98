// One Codex CLI task against the built CLI's serve-http, everything inside one loopback-only
// network namespace: the scripted OpenAI upstream (when the scenario has one), serve-http, a
// recording proxy in front of it, and `codex exec`. The test process cannot reach into the
// namespace, so the whole scenario runs in a child and reports back through a JSON file.
//
// Imported: runCodexScenario(spec) runs this file as a script inside `unshare --net` and resolves
// with its report. As a script (compiled): node dist/test/helpers/codex-scenario.js <spec> <report>
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runCodexExec, type CodexRun } from "./codex-exec.js";
import { startHttpServer, type HttpServer } from "./http-server.js";
import { inLoopbackNetns, networkInterfaces } from "./loopback-netns.js";
import { startAgentUpstream, type AgentUpstream, type UpstreamStep } from "./openai-agent-upstream.js";
import { startRecordingProxy, type Exchange, type RecordingProxy } from "./recording-proxy.js";

/** Replaced in `serverYaml` by the scripted upstream's base URL (http://127.0.0.1:<port>/v1). */
export const UPSTREAM_URL_PLACEHOLDER = "__UPSTREAM_BASE_URL__";

export interface CodexScenario {
  codexBinary: string;
  /** serve-http's config.yaml (see UPSTREAM_URL_PLACEHOLDER). */
  serverYaml: string;
  bearerToken: string;
  /** The model name Codex sends; absent: Codex's own default (an http.model_aliases glob maps it). */
  model?: string;
  prompt: string;
  /** Starts the scripted OpenAI-compatible upstream with these steps (openai-agent-upstream.ts). */
  upstreamSteps?: UpstreamStep[];
}

export interface CodexScenarioReport {
  /** The network interfaces inside the namespace (["lo"]). */
  interfaces: string[];
  codex: CodexRun;
  /** Codex <-> serve-http, as the proxy saw them. */
  exchanges: Exchange[];
  /** The upstream's chat completion request bodies, in order. */
  upstreamChats: unknown[];
  serverStderr: string;
}

const SCRIPT = fileURLToPath(import.meta.url);

/** Runs the scenario in a fresh loopback-only namespace (check loopbackNetnsUnavailable() first). */
export async function runCodexScenario(spec: CodexScenario, timeoutMs = 300_000): Promise<CodexScenarioReport> {
  const dir = await mkdtemp(path.join(tmpdir(), "codex-scenario-"));
  try {
    const specPath = path.join(dir, "spec.json");
    const reportPath = path.join(dir, "report.json");
    await writeFile(specPath, JSON.stringify(spec));
    const wrapped = inLoopbackNetns(process.execPath, [SCRIPT, specPath, reportPath]);
    // Its own process group: a hang is ended by killing the group, serve-http and Codex included.
    const child = spawn(wrapped.file, wrapped.args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, timeoutMs);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (exitCode) => resolve(exitCode));
    }).finally(() => clearTimeout(timer));
    const report = await readFile(reportPath, "utf8").catch(() => null);
    if (code !== 0 || report === null) throw new Error(`codex scenario failed (exit ${String(code)}): ${stderr}`);
    return JSON.parse(report) as CodexScenarioReport;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(specPath: string, reportPath: string): Promise<void> {
  const spec = JSON.parse(await readFile(specPath, "utf8")) as CodexScenario;
  let upstream: AgentUpstream | undefined;
  let server: HttpServer | undefined;
  let proxy: RecordingProxy | undefined;
  try {
    upstream = spec.upstreamSteps === undefined ? undefined : await startAgentUpstream(spec.upstreamSteps);
    const yaml = spec.serverYaml.replaceAll(UPSTREAM_URL_PLACEHOLDER, upstream?.baseUrl ?? UPSTREAM_URL_PLACEHOLDER);
    server = await startHttpServer({ yaml, token: spec.bearerToken });
    proxy = await startRecordingProxy(server.port);
    const codex = await runCodexExec({
      binary: spec.codexBinary,
      baseUrl: `${proxy.base}/v1`,
      bearerToken: spec.bearerToken,
      ...(spec.model === undefined ? {} : { model: spec.model }),
      prompt: spec.prompt,
    });
    const report: CodexScenarioReport = {
      interfaces: networkInterfaces(),
      codex,
      exchanges: proxy.exchanges,
      upstreamChats: upstream?.chats().map((request) => request.body) ?? [],
      serverStderr: server.stderr(),
    };
    await writeFile(reportPath, JSON.stringify(report));
  } finally {
    await proxy?.close();
    await server?.stop();
    await upstream?.close();
  }
}

if (process.argv[1] === SCRIPT) {
  const [specPath, reportPath] = process.argv.slice(2);
  main(specPath ?? "", reportPath ?? "").catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
