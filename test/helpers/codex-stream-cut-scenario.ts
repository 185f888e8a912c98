// One `codex exec` against the built CLI's serve-http through a recording proxy that breaks off the
// first /v1/responses stream after a delay (recording-proxy.ts `cut`), everything inside one
// loopback-only network namespace like codex-scenario.ts. It also keeps the server's "reading the
// prompt" debug lines (src/http/request/request-record.ts) as they arrive, each with its arrival time, so
// the test can tell how much of the prompt had been read before the cut.
//
// Imported: runCodexStreamCutScenario(spec) runs this file as a script inside `unshare --net` and
// resolves with its report. As a script (compiled): node dist/test/helpers/codex-stream-cut-scenario.js <spec> <report>
import { fileURLToPath } from "node:url";
import { runScenarioInNetns, runScenarioScript } from "./client-scenario.js";
import { runCodexExec, type CodexRun } from "./codex-exec.js";
import { startHttpServer, type HttpServer } from "./http-server.js";
import { networkInterfaces } from "./loopback-netns.js";
import type { PromptReadLine } from "./long-prompt.js";
import { startRecordingProxy, type Exchange, type ProxyCut, type ProxyCutDone, type RecordingProxy } from "./recording-proxy.js";

export interface CodexStreamCutScenario {
  codexBinary: string;
  /** serve-http's config.yaml. */
  serverYaml: string;
  bearerToken: string;
  model: string;
  prompt: string;
  /** More keys of Codex's provider table (codex-exec.ts): `stream_max_retries` >= 1, or Codex gives up at the cut. */
  providerSettings: Record<string, number>;
  cut: ProxyCut;
  /** Bounds Codex's run. */
  codexTimeoutMs: number;
}

/** A "reading the prompt" line of serve-http, with the request it belongs to and when the scenario read it. */
export interface TimedPromptRead extends PromptReadLine {
  requestId: string;
  /** performance.now() in the scenario process (the same clock as the cut's `atMs`). */
  atMs: number;
}

export interface CodexStreamCutReport {
  /** The network interfaces inside the namespace (["lo"]). */
  interfaces: string[];
  codex: CodexRun;
  /** Codex <-> serve-http, as the proxy saw them. */
  exchanges: Exchange[];
  cut: ProxyCutDone | null;
  promptReads: TimedPromptRead[];
  serverStderr: string;
}

const SCRIPT = fileURLToPath(import.meta.url);

/** Runs the scenario in a fresh loopback-only namespace (check loopbackNetnsUnavailable() first). */
export function runCodexStreamCutScenario(spec: CodexStreamCutScenario, timeoutMs: number): Promise<CodexStreamCutReport> {
  return runScenarioInNetns<CodexStreamCutReport>(SCRIPT, spec, "codex stream cut scenario", timeoutMs);
}

/** Collects the server's "reading the prompt" lines from its stderr as they come (the helper keeps only a tail of it). */
function collectPromptReads(server: HttpServer): TimedPromptRead[] {
  const reads: TimedPromptRead[] = [];
  let pending = "";
  server.proc.stderr.on("data", (chunk: string) => {
    const lines = (pending + chunk).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.includes('"reading the prompt"')) continue;
      const entry = JSON.parse(line) as PromptReadLine & { request_id: string };
      reads.push({ requestId: entry.request_id, processed: entry.processed, total: entry.total, cached: entry.cached, atMs: performance.now() });
    }
  });
  return reads;
}

async function main(spec: CodexStreamCutScenario): Promise<CodexStreamCutReport> {
  let server: HttpServer | undefined;
  let proxy: RecordingProxy | undefined;
  try {
    // Debug: the prompt-reading lines.
    server = await startHttpServer({ yaml: spec.serverYaml, token: spec.bearerToken, env: { LOCAL_AI_LOG_LEVEL: "debug" } });
    const promptReads = collectPromptReads(server);
    proxy = await startRecordingProxy(server.port, spec.cut);
    const codex = await runCodexExec({
      binary: spec.codexBinary,
      baseUrl: `${proxy.base}/v1`,
      bearerToken: spec.bearerToken,
      model: spec.model,
      prompt: spec.prompt,
      providerSettings: spec.providerSettings,
      timeoutMs: spec.codexTimeoutMs,
    });
    return { interfaces: networkInterfaces(), codex, exchanges: proxy.exchanges, cut: proxy.cutDone(), promptReads, serverStderr: server.stderr() };
  } finally {
    await proxy?.close();
    await server?.stop();
  }
}

runScenarioScript(SCRIPT, main);
