// One Codex CLI task against the built CLI's serve-http, everything inside one loopback-only
// network namespace (client-scenario.ts: the scripted OpenAI upstream when the scenario has one,
// serve-http, a recording proxy in front of it, and `codex exec`).
//
// Imported: runCodexScenario(spec) runs this file as a script inside `unshare --net` and resolves
// with its report. As a script (compiled): node dist/test/helpers/codex-scenario.js <spec> <report>
import { fileURLToPath } from "node:url";
import { runScenarioInNetns, runScenarioScript, withServedClient, type ServedScenario } from "./client-scenario.js";
import { runCodexExec, type CodexRun } from "./codex-exec.js";
import type { Exchange } from "./recording-proxy.js";

export { UPSTREAM_URL_PLACEHOLDER } from "./client-scenario.js";

export interface CodexScenario extends ServedScenario {
  codexBinary: string;
  bearerToken: string;
  /** The model name Codex sends; absent: Codex's own default (an http.model_aliases glob maps it). */
  model?: string;
  prompt: string;
  /** More keys of Codex's provider table (codex-exec.ts). */
  providerSettings?: Record<string, number>;
  /** Bounds Codex's run (default 240 s). */
  codexTimeoutMs?: number;
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
export function runCodexScenario(spec: CodexScenario, timeoutMs = 300_000): Promise<CodexScenarioReport> {
  return runScenarioInNetns<CodexScenarioReport>(SCRIPT, spec, "codex scenario", timeoutMs);
}

async function main(spec: CodexScenario): Promise<CodexScenarioReport> {
  const { client: codex, ...run } = await withServedClient(spec, spec.bearerToken, (proxyBase) =>
    runCodexExec({
      binary: spec.codexBinary,
      baseUrl: `${proxyBase}/v1`,
      bearerToken: spec.bearerToken,
      ...(spec.model === undefined ? {} : { model: spec.model }),
      prompt: spec.prompt,
      ...(spec.providerSettings === undefined ? {} : { providerSettings: spec.providerSettings }),
      ...(spec.codexTimeoutMs === undefined ? {} : { timeoutMs: spec.codexTimeoutMs }),
    }),
  );
  return { ...run, codex };
}

runScenarioScript(SCRIPT, main);
