import { matchTools } from "./tool-glob.js";
import { assignToolNames } from "./tool-names.js";
import { unknownToolResult } from "./tool-results.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { McpContent, McpMessage, McpPromptInfo, McpResourceList, ToolCallOptions, ToolCallResult, ToolDescriptor, ToolProvider } from "./tool-types.js";

export interface ToolProviderPart {
  provider: ToolProvider;
  /**
   * Closed with the composite. A shared provider (the config's MCP servers, which every session
   * uses) is not: it lives as long as the runtime.
   */
  owned: boolean;
}

interface Route {
  part: ToolProvider;
  /** The name the part knows the tool by. */
  inner: string;
}

/**
 * Several providers as one (a session's tools: the config's servers, the session's own MCP
 * servers, the editor's file tools). Names follow the rule of docs/tools.md across the parts: the
 * parts in order, the first to claim a name keeps it, a later one becomes `<server>_<tool>`. The
 * agent's globs apply to the combined list, so `agents.<name>.tools` restricts every source alike.
 */
export class CompositeToolProvider implements ToolProvider {
  private closed = false;

  constructor(private readonly parts: readonly ToolProviderPart[]) {}

  async start(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.parts.map((part) => part.provider.start(signal)));
  }

  list(patterns: readonly string[]): ToolDescriptor[] {
    return matchTools(this.combined().tools, patterns).tools;
  }

  async call(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolCallResult> {
    const { tools, routes } = this.combined();
    const route = routes.get(name);
    if (route === undefined || this.closed) return unknownToolResult(name, tools.map((tool) => tool.name));
    return route.part.call(route.inner, args, options);
  }

  async refusal(name: string, args: Record<string, unknown>): Promise<string | null> {
    const route = this.combined().routes.get(name);
    if (route === undefined || this.closed || route.part.refusal === undefined) return null;
    return route.part.refusal(route.inner, args);
  }

  onPromptsChanged(listener: () => void): () => void {
    const unsubscribe = this.parts.map((part) => part.provider.onPromptsChanged?.(listener));
    return () => {
      for (const off of unsubscribe) off?.();
    };
  }

  missingToolNotes(): string[] {
    return this.parts.flatMap((part) => part.provider.missingToolNotes?.() ?? []);
  }

  async refreshed(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.parts.map((part) => part.provider.refreshed?.(signal) ?? Promise.resolve()));
  }

  mcpServers(): string[] {
    return this.parts.flatMap((part) => part.provider.mcpServers?.() ?? []);
  }

  async prompts(signal?: AbortSignal): Promise<McpPromptInfo[]> {
    const lists = await Promise.all(this.parts.map((part) => part.provider.prompts?.(signal) ?? Promise.resolve([])));
    return lists.flat();
  }

  async getPrompt(server: string, name: string, args: Record<string, string>, signal?: AbortSignal): Promise<McpMessage[]> {
    const part = this.partOf(server, "prompt.server");
    if (part.getPrompt === undefined) throw unknownServer(server, "prompt.server");
    return part.getPrompt(server, name, args, signal);
  }

  async resources(signal?: AbortSignal): Promise<McpResourceList> {
    const lists = await Promise.all(this.parts.map((part) => part.provider.resources?.(signal) ?? Promise.resolve({ resources: [], templates: [] })));
    return { resources: lists.flatMap((list) => list.resources), templates: lists.flatMap((list) => list.templates) };
  }

  async readResource(server: string, uri: string, signal?: AbortSignal): Promise<McpContent[]> {
    const part = this.partOf(server, "server");
    if (part.readResource === undefined) throw unknownServer(server, "server");
    return part.readResource(server, uri, signal);
  }

  /** The first part that runs the server (the config's come first, as for tool names). */
  private partOf(server: string, param: string): ToolProvider {
    const part = this.parts.find((candidate) => candidate.provider.mcpServers?.().includes(server) === true);
    if (part === undefined) throw unknownServer(server, param);
    return part.provider;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.parts.filter((part) => part.owned).map((part) => part.provider.close()));
  }

  /** Recomputed per use: parts finish starting (and servers come and go) independently. */
  private combined(): { tools: ToolDescriptor[]; routes: Map<string, Route> } {
    const all = this.parts.flatMap((part) => part.provider.list(["*"]).map((tool) => ({ part: part.provider, tool })));
    const names = assignToolNames(all.map(({ tool }) => ({ server: tool.server, remoteName: tool.name })));
    const routes = new Map<string, Route>();
    const tools = all.map(({ part, tool }, index) => {
      const name = names[index] as string;
      routes.set(name, { part, inner: tool.name });
      return name === tool.name ? tool : { ...tool, name };
    });
    return { tools, routes };
  }
}

function unknownServer(server: string, param: string): RuntimeError {
  return new RuntimeError("invalid_params", `no MCP server "${server}" is running`, { details: { param } });
}
