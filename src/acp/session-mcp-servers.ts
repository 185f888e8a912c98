import type { McpServer } from "@agentclientprotocol/sdk";
import { RuntimeError } from "../shared/runtime-error.js";
import type { McpServerSpec } from "../tools/mcp/mcp-server-spec.js";

/** Per call, as for config servers (mcp.servers.*.timeout_ms's default). */
const TIMEOUT_MS = 60_000;

/**
 * The MCP servers an editor passes in `session/new` / `session/load`, as the session's own
 * servers: stdio servers are spawned in the session's cwd, HTTP and SSE servers are connected to.
 * Every tool of theirs needs approval: the editor asks its user (an "always" answer is
 * remembered for the session). Names are made unique and safe for tool names.
 */
export function sessionMcpServers(servers: readonly McpServer[], cwd: string): Record<string, McpServerSpec> {
  const specs: Record<string, McpServerSpec> = {};
  servers.forEach((server, index) => {
    const name = uniqueName(server.name, specs);
    if ("type" in server && (server.type === "http" || server.type === "sse")) {
      if (!URL.canParse(server.url)) throw new RuntimeError("invalid_params", `mcpServers[${index}].url ${JSON.stringify(server.url)} is not a URL`, { details: { param: `mcpServers[${index}].url` } });
      specs[name] = { transport: server.type, url: server.url, headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])), requires_approval: true, timeout_ms: TIMEOUT_MS, oauth: null };
      return;
    }
    const stdio = server;
    if (stdio.command === "") throw new RuntimeError("invalid_params", `mcpServers[${index}].command is empty`, { details: { param: `mcpServers[${index}].command` } });
    specs[name] = { command: stdio.command, args: stdio.args, env: Object.fromEntries(stdio.env.map((variable) => [variable.name, variable.value])), cwd, requires_approval: true, timeout_ms: TIMEOUT_MS };
  });
  return specs;
}

function uniqueName(given: string, taken: Record<string, unknown>): string {
  const base = given.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 48) || "server";
  if (!(base in taken)) return base;
  for (let n = 2; ; n++) if (!(`${base}_${n}` in taken)) return `${base}_${n}`;
}
