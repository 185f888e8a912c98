import { applyMcpConfig } from "../config/apply-mcp-config.js";
import { loadConfig, requireConfig } from "../config/load-config.js";
import type { Config } from "../config/schema.js";
import type { CliDeps } from "./cli-deps.js";

/** The config of the `mcp` commands: config.yaml's servers plus --mcp-config's (throws RuntimeError when either is invalid or missing). */
export async function mcpCommandConfig(options: { config?: string; mcpConfig?: string }, deps: CliDeps): Promise<Config> {
  const state = await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd });
  return requireConfig(await applyMcpConfig(state, options.mcpConfig, deps.env, deps.cwd));
}
