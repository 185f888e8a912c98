import type { Logger } from "pino";
import type { Config } from "../../config/schema.js";
import { planModels, type PlanOptions } from "../../engine/plan/plan-models.js";
import type { ModelPlanReport } from "../../engine/plan/plan-types.js";
import { McpAuthFiles } from "../../store/mcp-auth-files.js";
import { listConfiguredTools } from "../../tools/mcp/configured-tools.js";
import { McpAuth } from "../../tools/mcp/oauth/mcp-auth.js";

/** Bound on starting each MCP server for plan (a first `npx -y` may download the server). */
const MCP_START_TIMEOUT_MS = 25_000;

/**
 * `plan` for the CLI and the stdio method: the models' plans, plus how much of each planned
 * model's context its agents' tool schemas take. The schemas exist only in the MCP servers, so
 * those are started once (as a chat's first turn would) when an agent of a planned model may
 * offer tools, and closed again; a server that does not start becomes a report note.
 */
export async function planWithTools(config: Config, options: PlanOptions & { logger: Logger; env: Readonly<Record<string, string | undefined>> }): Promise<ModelPlanReport> {
  const models = options.model === undefined ? Object.keys(config.llama.models) : [options.model];
  const agents = Object.entries(config.agents).filter(([, agent]) => models.includes(agent.model) && agent.tools.length > 0).map(([name]) => name);
  if (agents.length === 0 || Object.keys(config.mcp.servers).length === 0 || !models.every((name) => name in config.llama.models)) return planModels(config, options);
  const listed = await listConfiguredTools(config, { logger: options.logger, env: { ...options.env }, startTimeoutMs: MCP_START_TIMEOUT_MS, agents, auth: new McpAuth({ store: new McpAuthFiles(config.app.data_dir), logger: options.logger }), ...(options.signal ? { signal: options.signal } : {}) });
  const report = await planModels(config, { ...options, toolOffers: listed.agents });
  for (const server of listed.servers) {
    if (server.state !== "ready") report.notes.push(`MCP server ${server.server} did not start (${server.error ?? server.state}): its tool schemas are not counted; \`local-ai doctor\` says more`);
  }
  return report;
}
