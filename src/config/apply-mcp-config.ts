import path from "node:path";
import type { ConfigState } from "./load-config.js";
import { loadMcpConfig, mergeMcpConfig } from "./mcp-config.js";

/**
 * `--mcp-config F`: the `mcp:` servers come (also) from F (our YAML shape or the common
 * `{"mcpServers": {...}}` JSON). A broken F makes the config invalid with F's problems, the same
 * way a broken config.yaml does: the server still starts and says what is wrong.
 */
export async function applyMcpConfig(
  state: ConfigState,
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Promise<ConfigState> {
  if (file === undefined || file === "" || state.status !== "loaded") return state;
  const result = await loadMcpConfig(path.resolve(cwd, file), env);
  if (!result.ok) return { status: "invalid", path: result.path, source: "flag", problems: result.problems };
  return { ...state, config: mergeMcpConfig(state.config, result.servers) };
}
