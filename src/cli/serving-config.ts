import { applyMcpConfig } from "../config/apply-mcp-config.js";
import { formatProblem } from "../config/config-problem.js";
import { loadConfig, type ConfigState } from "../config/load-config.js";
import type { Config } from "../config/schema.js";
import type { CliDeps } from "./cli-deps.js";

export type ServingConfig = { ok: true; config: Config; configState: ConfigState & { status: "loaded" } } | { ok: false; message: string };

/**
 * The config a server that starts eagerly needs (serve-http, serve-socket): found, valid, with at
 * least one agent. Otherwise the one line that says why, for stderr.
 */
export async function loadServingConfig(options: { config?: string | undefined; mcpConfig?: string | undefined }, deps: CliDeps): Promise<ServingConfig> {
  const configState = await applyMcpConfig(await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd }), options.mcpConfig, deps.env, deps.cwd);
  if (configState.status === "missing") return { ok: false, message: `no config file at ${configState.path} (pass --config F or set LOCAL_AI_CONFIG; see config.example.yaml)` };
  if (configState.status === "invalid") {
    return { ok: false, message: `invalid config ${configState.path}:\n${configState.problems.map((p) => `  ${formatProblem(configState.path, p)}`).join("\n")}` };
  }
  if (Object.keys(configState.config.agents).length === 0) return { ok: false, message: `no agent is configured under agents in ${configState.path}` };
  return { ok: true, config: configState.config, configState };
}
