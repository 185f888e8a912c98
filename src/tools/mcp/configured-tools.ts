import type { Config } from "../../config/schema.js";
import type { Logger } from "../../logging/create-logger.js";
import type { McpAuth } from "./oauth/mcp-auth.js";
import { McpToolProvider, type McpServerStatus } from "./mcp-tool-provider.js";

/** A tool as the model is offered it (the shape of the engine's ToolSpec). */
export interface ToolSchema {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** What one agent would offer its model, from the servers that started. */
export interface AgentTools {
  agent: string;
  model: string;
  systemPrompt: string;
  maxTokens: number;
  tools: ToolSchema[];
}

export interface ConfiguredTools {
  agents: AgentTools[];
  servers: McpServerStatus[];
}

/**
 * Connects every configured MCP server once (as a chat's first turn would), lists what each
 * agent's `tools` patterns select, and closes them again: for doctor and plan, which weigh the
 * tool schemas against the context. A server that does not start within `startTimeoutMs` is left
 * out and reported in `servers`. `agents`: only these (default every agent).
 */
export async function listConfiguredTools(
  config: Config,
  deps: { logger: Logger; env?: Record<string, string | undefined>; signal?: AbortSignal; startTimeoutMs: number; agents?: readonly string[]; auth?: McpAuth },
): Promise<ConfiguredTools> {
  const provider = new McpToolProvider(config.mcp.servers, { logger: deps.logger, ...(deps.env ? { env: deps.env } : {}), startTimeoutMs: deps.startTimeoutMs, ...(deps.auth ? { auth: deps.auth } : {}) });
  try {
    await provider.start(deps.signal);
    const agents = Object.entries(config.agents)
      .filter(([name]) => deps.agents === undefined || deps.agents.includes(name))
      .map(([agent, settings]) => ({
        agent,
        model: settings.model,
        systemPrompt: settings.system_prompt,
        maxTokens: settings.max_tokens,
        tools: provider.list(settings.tools).map((tool) => ({ name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.inputSchema })),
      }));
    return { agents, servers: provider.status() };
  } finally {
    await provider.close();
  }
}
