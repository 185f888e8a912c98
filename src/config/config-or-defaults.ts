import { loadConfig, parseConfigText, requireConfig } from "./load-config.js";
import type { Config } from "./schema.js";

/**
 * The config for commands a new user runs before writing one (`pull`, `models`, `plan --model
 * REF`): the file when there is one (an invalid one is an error, never silently replaced), the
 * defaults relative to the current folder otherwise (models then go to ./.local-ai/models).
 */
export async function configOrDefaults(flag: string | undefined, deps: { env: Readonly<Record<string, string | undefined>>; cwd: string }): Promise<{ config: Config; path: string | null }> {
  const state = await loadConfig({ flag, env: deps.env, cwd: deps.cwd });
  // A config named explicitly (--config, LOCAL_AI_CONFIG) must exist.
  if (state.status === "missing" && state.source === "default") {
    const parsed = parseConfigText("", deps.env, deps.cwd);
    if (parsed.ok) return { config: parsed.config, path: null };
  }
  return { config: requireConfig(state), path: state.path };
}
