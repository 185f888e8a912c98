// Runs the real Claude Code (`claude -p`, one non-interactive task, JSON output) against a
// Messages API endpoint, with a throwaway HOME so no user config, login or history is read or
// written. It refuses to run outside a loopback-only network namespace (`unshare --net`, loopback-netns.ts;
// checked by client-process.ts before the spawn).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runClientProcess, type ClientProcessRun } from "./client-process.js";

export interface ClaudeCodeOptions {
  /** The native claude binary (claude-code-binary.ts). */
  binary: string;
  /** ANTHROPIC_BASE_URL, e.g. http://127.0.0.1:8080 (Claude Code appends /v1/messages). */
  baseUrl: string;
  /** `bearer`: ANTHROPIC_AUTH_TOKEN (Authorization: Bearer); `api_key`: ANTHROPIC_API_KEY (x-api-key). */
  auth: { kind: "bearer" | "api_key"; token: string };
  /** ANTHROPIC_MODEL; absent: Claude Code's own default model name (served through http.model_aliases). */
  model?: string | undefined;
  prompt: string;
  /** --allowedTools: the tools it may run without asking (e.g. ["Bash"]). */
  allowedTools?: readonly string[] | undefined;
  /** Bounds a hang only (the child is killed after it). */
  timeoutMs?: number;
}

/** What `--output-format json` prints: the fields the tests read. */
export interface ClaudeCodeResult {
  type: string;
  subtype: string;
  is_error: boolean;
  result: string;
  num_turns?: number;
}

export interface ClaudeCodeRun extends ClientProcessRun {
  /** stdout parsed, when it is the JSON result. */
  json: ClaudeCodeResult | null;
}

/** The environment that points Claude Code at local-ai and turns off everything that would call out (docs/clients.md shows it). */
export function claudeCodeEnv(options: Pick<ClaudeCodeOptions, "baseUrl" | "auth" | "model">, home: string): Record<string, string> {
  return {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: home,
    ANTHROPIC_BASE_URL: options.baseUrl,
    [options.auth.kind === "bearer" ? "ANTHROPIC_AUTH_TOKEN" : "ANTHROPIC_API_KEY"]: options.auth.token,
    ...(options.model === undefined ? {} : { ANTHROPIC_MODEL: options.model }),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
  };
}

export async function runClaudeCode(options: ClaudeCodeOptions): Promise<ClaudeCodeRun> {
  const home = await mkdtemp(path.join(tmpdir(), "claude-home-"));
  const cwd = await mkdtemp(path.join(tmpdir(), "claude-work-"));
  const args = ["-p", options.prompt, "--output-format", "json", ...(options.allowedTools === undefined ? [] : ["--allowedTools", options.allowedTools.join(",")])];
  let run: ClientProcessRun;
  try {
    run = await runClientProcess("Claude Code", options.binary, args, { cwd, env: claudeCodeEnv(options, home), timeoutMs: options.timeoutMs });
  } finally {
    await rm(home, { recursive: true, force: true });
    await rm(cwd, { recursive: true, force: true });
  }
  let json: ClaudeCodeResult | null = null;
  try {
    json = JSON.parse(run.stdout) as ClaudeCodeResult;
  } catch {
    json = null;
  }
  return { ...run, json };
}
