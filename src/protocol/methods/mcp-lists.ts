import type { SessionRunner } from "../../agent/session-runner.js";
import { defineMethod, type MethodDefinition } from "../method.js";

/**
 * `mcp_prompts`: `{prompts: [{server, name, description, arguments}]}` of every running MCP
 * server (a chat's `prompt` param runs one); `mcp_resources`: `{resources, templates}` (a chat
 * input's `{type: "resource", server, uri}` part attaches one). The servers start first.
 */
export function mcpPromptsMethod(runner: () => SessionRunner | Promise<SessionRunner>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.mcpListParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.mcpPromptsResult),
    handle: async (_params, context) => ({ prompts: await (await runner()).mcpPrompts(context.signal) }),
  });
}

export function mcpResourcesMethod(runner: () => SessionRunner | Promise<SessionRunner>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.mcpListParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.mcpResourcesResult),
    handle: async (_params, context) => (await runner()).mcpResources(context.signal),
  });
}
