import { everythingServer } from "./mcp-servers.js";

/**
 * Model + agents YAML shared by the e2e files: `assistant` on the demo model (exact sentence),
 * `talker` on the tiny model (never stops). `extraModels`: more `llama.models` entries, as YAML
 * lines indented under `models:`.
 */
export function agentsYaml(demoPath: string, tinyPath?: string, extraModels: readonly string[] = []): string {
  return [
    "llama:",
    "  models:",
    "    default:",
    `      path: ${JSON.stringify(demoPath)}`,
    "      threads: 1",
    "      ctx_size: 2048",
    ...(tinyPath === undefined ? [] : ["    tiny:", `      path: ${JSON.stringify(tinyPath)}`, "      threads: 1", "      ctx_size: 4096"]),
    ...extraModels,
    "agents:",
    "  assistant:",
    "    temperature: 0",
    ...(tinyPath === undefined ? [] : ["  talker:", "    model: tiny", "    temperature: 0", "    max_tokens: 3000"]),
    "",
  ].join("\n");
}

/**
 * The demo tool model behind `assistant`, whose only tool is server-everything's `echo` (gated by
 * approval unless `approval` is false): the call the model makes runs for real.
 */
export function echoToolYaml(toolModelPath: string, approval = true): string {
  const server = everythingServer();
  return [
    "llama:",
    "  models:",
    "    default:",
    `      path: ${JSON.stringify(toolModelPath)}`,
    "      threads: 1",
    "      ctx_size: 2048",
    "agents:",
    "  assistant:",
    "    temperature: 0",
    '    tools: ["echo"]',
    "mcp:",
    "  servers:",
    "    everything:",
    `      command: ${JSON.stringify(server.command)}`,
    `      args: ${JSON.stringify(server.args)}`,
    ...(approval ? ["      requires_approval: [echo]"] : []),
    "",
  ].join("\n");
}
