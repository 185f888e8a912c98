import type { McpClient } from "../http-deps.js";
import { unknownToolResult } from "../../tools/tool-results.js";
import type { ToolCallResult, ToolDescriptor, ToolProvider } from "../../tools/tool-types.js";
import type { RequestMcpServer } from "./mcp-tool-request.js";

/** A server's tools as an `mcp_list_tools` item carries them; `error` when it could not be listed. */
export interface ListedServer {
  label: string;
  tools: Array<{ name: string; input_schema: unknown; description: string | null; annotations: null }>;
  error: string | null;
}

/**
 * The MCP servers of one request, as the turn's tools: connected (Streamable HTTP) and listed
 * when the turn starts, closed when it ends. Only the allowed tools are offered; each says
 * whether it needs approval by the request's `require_approval`. A tool whose name a function
 * tool of the request already has is left out (the function keeps the name), with a warning.
 */
export class RequestMcpTools implements ToolProvider {
  private descriptors: ToolDescriptor[] = [];
  private readonly origins = new Map<string, { label: string; name: string }>();
  readonly warnings: string[] = [];

  constructor(
    readonly servers: readonly RequestMcpServer[],
    private readonly client: McpClient,
    private readonly taken: ReadonlySet<string>,
  ) {}

  /** Connects and lists every server (in parallel); a server that fails is reported, not thrown. */
  async start(signal?: AbortSignal): Promise<void> {
    await this.client.start(signal);
    const byLabel = new Map(this.servers.map((server) => [server.label, server]));
    this.descriptors = [];
    for (const tool of this.client.list(["*"])) {
      const server = byLabel.get(tool.server);
      if (server === undefined || (server.allowed !== null && !server.allowed.has(tool.remoteName))) continue;
      if (this.taken.has(tool.name)) {
        this.warnings.push(`${server.param}: the MCP tool "${tool.remoteName}" has the name of a function tool of this request; left out`);
        continue;
      }
      this.descriptors.push({ ...tool, requiresApproval: server.requiresApproval(tool.remoteName) });
      this.origins.set(tool.name, { label: server.label, name: tool.remoteName });
    }
  }

  /** What each server listed (after start), in request order. */
  listed(): ListedServer[] {
    const status = new Map(this.client.status().map((entry) => [entry.server, entry]));
    return this.servers.map((server) => {
      const state = status.get(server.label);
      const error = state === undefined || state.state === "ready" ? null : (state.error ?? `the server could not be reached (${state.state})`);
      const tools = this.descriptors
        .filter((tool) => tool.server === server.label)
        .map((tool) => ({ name: tool.remoteName, input_schema: tool.inputSchema, description: tool.description ?? null, annotations: null }));
      return { label: server.label, tools, error };
    });
  }

  /** The server and its name for a tool as the model was offered it; undefined for other tools. */
  origin(offeredName: string): { label: string; name: string } | undefined {
    return this.origins.get(offeredName);
  }

  list(): ToolDescriptor[] {
    return this.descriptors;
  }

  async call(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolCallResult> {
    if (!this.origins.has(name)) return unknownToolResult(name, [...this.origins.keys()]);
    return this.client.call(name, args, options);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
