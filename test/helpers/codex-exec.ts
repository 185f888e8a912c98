// Runs the real Codex CLI (`codex exec`, one non-interactive task) against a Responses API
// endpoint, with a throwaway HOME and CODEX_HOME so no user config, login or history is read or
// written. It refuses to run outside a loopback-only network namespace (`unshare --net`, loopback-netns.ts;
// checked by client-process.ts before the spawn).
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runClientProcess, type ClientProcessRun } from "./client-process.js";

export interface CodexExecOptions {
  /** The native codex binary (codex-binary.ts). */
  binary: string;
  /** The provider's base URL, e.g. http://127.0.0.1:8080/v1 (Codex appends /responses). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` (serve-http's --bearer-token). */
  bearerToken: string;
  /** The `model` Codex sends: an agent name or an `http.model_aliases` name; absent: Codex's own default. */
  model?: string;
  prompt: string;
  /** Working directory for the task; a fresh temp folder when absent. */
  cwd?: string;
  /** Bounds a hang only (the child is killed after it). */
  timeoutMs?: number;
  /** More keys of the provider's table (`stream_idle_timeout_ms`, `stream_max_retries`). */
  providerSettings?: Record<string, number>;
}

export interface CodexRun extends ClientProcessRun {
  /** What `--output-last-message` wrote: the agent's final message, exactly as Codex took it. */
  lastMessage: string | null;
  /** The config.toml Codex ran with. */
  configToml: string;
}

/** The env var Codex reads the provider's key from (`env_key`): the one serve-http reads its token from too. */
export const CODEX_TOKEN_ENV = "LOCAL_AI_TOKEN";

/**
 * The config.toml that makes Codex use local-ai (docs/clients.md shows the same settings):
 * a custom provider on the Responses wire API, the key from an env var, and everything that would
 * otherwise call out to the internet turned off (update check, analytics, plugins).
 */
export function codexConfigToml(baseUrl: string, model?: string, providerSettings: Record<string, number> = {}): string {
  return [
    ...(model === undefined ? [] : [`model = ${JSON.stringify(model)}`]),
    `model_provider = "local-ai"`,
    "check_for_update_on_startup = false",
    "",
    "[model_providers.local-ai]",
    `name = "local-ai"`,
    `base_url = ${JSON.stringify(baseUrl)}`,
    `wire_api = "responses"`,
    `env_key = ${JSON.stringify(CODEX_TOKEN_ENV)}`,
    ...Object.entries(providerSettings).map(([key, value]) => `${key} = ${value}`),
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[features]",
    "plugins = false",
    "",
  ].join("\n");
}

export async function runCodexExec(options: CodexExecOptions): Promise<CodexRun> {
  const home = await mkdtemp(path.join(tmpdir(), "codex-home-"));
  const ownCwd = options.cwd === undefined ? await mkdtemp(path.join(tmpdir(), "codex-work-")) : null;
  try {
    return await execIn(home, options.cwd ?? ownCwd ?? "", options);
  } finally {
    await rm(home, { recursive: true, force: true });
    if (ownCwd !== null) await rm(ownCwd, { recursive: true, force: true });
  }
}

async function execIn(home: string, cwd: string, options: CodexExecOptions): Promise<CodexRun> {
  const codexHome = path.join(home, ".codex");
  await mkdir(codexHome);
  const configToml = codexConfigToml(options.baseUrl, options.model, options.providerSettings);
  await writeFile(path.join(codexHome, "config.toml"), configToml);
  const lastMessageFile = path.join(home, "last-message.txt");
  const args = [
    "exec",
    "--strict-config", // a key this Codex does not know fails the run instead of being ignored
    "--skip-git-repo-check",
    "--ephemeral",
    "--color", "never",
    // Runs the model's commands without approval prompts or Codex's own sandbox (bubblewrap,
    // which not every CI host allows): the caller is confined to a loopback-only namespace, the
    // commands are the test's scripted ones, and the working directory is a temp folder.
    "--dangerously-bypass-approvals-and-sandbox",
    "--cd", cwd,
    "--output-last-message", lastMessageFile,
    options.prompt,
  ];
  const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, CODEX_HOME: codexHome, [CODEX_TOKEN_ENV]: options.bearerToken };
  const run = await runClientProcess("Codex CLI", options.binary, args, { cwd, env, timeoutMs: options.timeoutMs });
  const lastMessage = await readFile(lastMessageFile, "utf8").catch(() => null);
  return { ...run, lastMessage, configToml };
}
