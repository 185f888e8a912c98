// One Claude Code task against the built CLI's serve-http, everything inside one loopback-only
// network namespace (client-scenario.ts: the scripted OpenAI upstream when the scenario has one,
// serve-http, a recording proxy in front of it, and `claude -p`).
//
// Imported: runClaudeCodeScenario(spec) runs this file as a script inside `unshare --net` and
// resolves with its report. As a script (compiled): node dist/test/helpers/claude-code-scenario.js <spec> <report>
import { fileURLToPath } from "node:url";
import { runClaudeCode, type ClaudeCodeOptions, type ClaudeCodeRun } from "./claude-code-run.js";
import { runScenarioInNetns, runScenarioScript, withServedClient, type ServedScenario } from "./client-scenario.js";
import type { Exchange } from "./recording-proxy.js";

export { UPSTREAM_URL_PLACEHOLDER } from "./client-scenario.js";

/** serve-http's bearer token is `auth.token`. */
export interface ClaudeCodeScenario extends ServedScenario, Pick<ClaudeCodeOptions, "auth" | "model" | "prompt" | "allowedTools"> {
  binary: string;
}

export interface ClaudeCodeScenarioReport {
  /** The network interfaces inside the namespace (["lo"]). */
  interfaces: string[];
  claude: ClaudeCodeRun;
  /** Claude Code <-> serve-http, as the proxy saw them. */
  exchanges: Exchange[];
  /** The upstream's chat completion request bodies, in order. */
  upstreamChats: unknown[];
  serverStderr: string;
}

const SCRIPT = fileURLToPath(import.meta.url);

/** Runs the scenario in a fresh loopback-only namespace (check loopbackNetnsUnavailable() first). */
export function runClaudeCodeScenario(spec: ClaudeCodeScenario, timeoutMs = 300_000): Promise<ClaudeCodeScenarioReport> {
  return runScenarioInNetns<ClaudeCodeScenarioReport>(SCRIPT, spec, "claude code scenario", timeoutMs);
}

async function main(spec: ClaudeCodeScenario): Promise<ClaudeCodeScenarioReport> {
  const { client: claude, ...run } = await withServedClient(spec, spec.auth.token, (proxyBase) =>
    runClaudeCode({ binary: spec.binary, baseUrl: proxyBase, auth: spec.auth, model: spec.model, prompt: spec.prompt, allowedTools: spec.allowedTools }),
  );
  return { ...run, claude };
}

runScenarioScript(SCRIPT, main);
