import { configYaml, localModel, mcpServer } from "./config-yaml.js";
import { everythingServer } from "./mcp-servers.js";

/**
 * Model + agents YAML shared by the e2e files: `assistant` on the demo model (exact sentence),
 * `talker` on the tiny model (never stops). `extraModels`: more `llama.models` entries.
 */
export function agentsYaml(demoPath: string, tinyPath?: string, extraModels: Record<string, Record<string, unknown>> = {}): string {
  return configYaml({
    llama: { models: { default: localModel(demoPath), ...(tinyPath === undefined ? {} : { tiny: localModel(tinyPath, { ctx_size: 4096 }) }), ...extraModels } },
    agents: { assistant: { temperature: 0 }, ...(tinyPath === undefined ? {} : { talker: { model: "tiny", temperature: 0, max_tokens: 3000 } }) },
  });
}

/**
 * The demo tool model behind `assistant`, whose only tool is server-everything's `echo` (gated by
 * approval unless `approval` is false): the call the model makes runs for real. `agent`: more
 * settings of `assistant`.
 */
export function echoToolYaml(toolModelPath: string, approval = true, agent: Record<string, unknown> = {}): string {
  return configYaml({
    llama: { models: { default: localModel(toolModelPath) } },
    agents: { assistant: { temperature: 0, ...agent, tools: ["echo"] } },
    mcp: { servers: { everything: mcpServer(everythingServer(), approval ? { requires_approval: ["echo"] } : {}) } },
  });
}
