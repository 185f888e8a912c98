import type { Logger } from "pino";
import type { Config } from "../../config/schema.js";
import type { LlamaLoader } from "../../engine/llama/llama-loader.js";
import { describeToolShare, measureToolSchemas, toolShareFix, type ToolSchemaShare } from "../../engine/plan/tool-schema-budget.js";
import { isRemoteServer } from "../../config/mcp-server-kind.js";
import { McpAuthFiles } from "../../store/mcp-auth-files.js";
import { listConfiguredTools } from "../../tools/mcp/configured-tools.js";
import { loginCommand } from "../../tools/mcp/oauth/login-required.js";
import { McpAuth } from "../../tools/mcp/oauth/mcp-auth.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, firstLine, ok, warn } from "../check-result.js";

export interface ToolSchemasCheckOptions {
  llama: LlamaLoader;
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  signal?: AbortSignal;
  /** Bound on starting each MCP server (doctor's own check bound is a little longer). */
  startTimeoutMs: number;
}

/**
 * `mcp.<server>` (it starts and lists its tools) and `agent.<name>.tools` (how much of its
 * model's context the tool schemas take). The schemas exist only in the servers, so doctor starts
 * every configured server once, as a chat's first turn would, and closes it again: the only way
 * to know what the model will be offered. More than half the context is a warning; schemas that
 * leave no room for a turn fail (every turn of that agent would be context_overflow).
 */
export async function checkToolSchemas(config: Config, options: ToolSchemasCheckOptions): Promise<CheckResult[]> {
  if (Object.keys(config.mcp.servers).length === 0) return [];
  const listed = await listConfiguredTools(config, {
    logger: options.logger,
    env: { ...options.env },
    startTimeoutMs: options.startTimeoutMs,
    auth: new McpAuth({ store: new McpAuthFiles(config.app.data_dir), logger: options.logger }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const servers = listed.servers.map((server): CheckResult => {
    const id = `mcp.${server.server}`;
    const title = `MCP server ${server.server}`;
    const entry = config.mcp.servers[server.server];
    const remote = entry !== undefined && isRemoteServer(entry);
    const tools = `${server.tools} tool${server.tools === 1 ? "" : "s"}`;
    if (server.state === "ready") return ok(id, title, remote ? `reachable at ${entry.url}; listed ${tools}` : `started and listed ${tools}`, { tools: server.tools, ...(remote ? { url: entry.url } : {}) });
    if (remote && server.needsLogin === true) {
      return warn(id, title, `needs a login; its tools are not offered and not counted below`, `run \`${loginCommand(server.server)}\``, { state: "needs_login", url: entry.url });
    }
    if (remote) {
      return warn(id, title, `not reachable (${firstLine(server.error ?? server.state)}); its tools are not offered and not counted below`, `check mcp.servers.${server.server}.url and headers, and that the server runs`, { state: server.state, url: entry.url, ...(server.error === undefined ? {} : { error: server.error }) });
    }
    return warn(
      id,
      title,
      `did not start (${firstLine(server.error ?? server.state)}); its tools are not offered and not counted below`,
      `check mcp.servers.${server.server}.command and args by running them in a terminal; a first \`npx -y\` may need the network`,
      { state: server.state, ...(server.error === undefined ? {} : { error: server.error }) },
    );
  });
  const shares = await measureToolSchemas(config, listed.agents, { llama: options.llama, ...(options.signal ? { signal: options.signal } : {}) });
  return [...servers, ...shares.map(toCheck)];
}

function toCheck(share: ToolSchemaShare): CheckResult {
  const id = `agent.${share.agent}.tools`;
  const title = `Tool schemas of agent ${share.agent}`;
  const finding = describeToolShare(share);
  const data = { ...share };
  if (share.verdict === "no_room") return fail(id, title, finding, toolShareFix(share), data);
  if (share.verdict === "over_half") return warn(id, title, finding, toolShareFix(share), data);
  return ok(id, title, finding, data);
}
