import type { AgentEvent } from "../../agent/events.js";
import type { ListedServer } from "./request-mcp-tools.js";

/** The MCP output items of the Responses API, with the fields the pinned `openai` types give them. */

export interface McpListToolsItem {
  type: "mcp_list_tools";
  id: string;
  server_label: string;
  tools: ListedServer["tools"];
  error?: string | null;
}

export interface McpCallItem {
  type: "mcp_call";
  id: string;
  server_label: string;
  name: string;
  arguments: string;
  status: "in_progress" | "completed" | "incomplete" | "failed";
  output: string | null;
  error: string | null;
  approval_request_id: string | null;
}

export interface McpApprovalRequestItem {
  type: "mcp_approval_request";
  id: string;
  server_label: string;
  name: string;
  arguments: string;
}

export type McpOutputItem = McpListToolsItem | McpCallItem | McpApprovalRequestItem;

/** What the tracker needs of the response builder: items, ids and events. */
export interface ItemSink {
  add(item: McpOutputItem): number;
  emit(type: string, fields: Record<string, unknown>): void;
  id(prefix: "mcpl" | "mcp" | "mcpr"): string;
}

export interface McpItemContext {
  /** The MCP server and name of a tool as the model was offered it; undefined: not an MCP tool. */
  origin(offeredName: string): { label: string; name: string } | undefined;
  /** The approval this request answered: the call it approved carries its id. */
  approved?: { id: string; callId: string } | undefined;
  /** The response is stored, so a paused call can be answered by a later request (store: false: it cannot). */
  approvals?: boolean;
}

/**
 * AgentEvents of MCP tools as `mcp_list_tools`, `mcp_call` and `mcp_approval_request` items
 * and their `response.mcp_*` events. A call arrives whole (the model's arguments are complete
 * when the tool starts), so its arguments are one delta.
 */
export class McpItemTracker {
  private readonly calls = new Map<string, { item: McpCallItem; index: number }>();
  private readonly lists: Array<{ item: McpListToolsItem; index: number }> = [];

  constructor(
    private readonly sink: ItemSink,
    private readonly context: McpItemContext,
  ) {}

  /** Before the servers are asked: one in-progress list item per server. */
  listing(labels: readonly string[]): void {
    for (const label of labels) {
      const item: McpListToolsItem = { type: "mcp_list_tools", id: this.sink.id("mcpl"), server_label: label, tools: [] };
      const index = this.sink.add(item);
      this.sink.emit("response.mcp_list_tools.in_progress", { item_id: item.id, output_index: index });
      this.lists.push({ item, index });
    }
  }

  listed(servers: readonly ListedServer[]): void {
    for (const server of servers) {
      const open = this.lists.find(({ item }) => item.server_label === server.label);
      if (open === undefined) continue;
      const { item, index } = open;
      item.tools = server.tools;
      if (server.error !== null) item.error = server.error;
      this.sink.emit(server.error === null ? "response.mcp_list_tools.completed" : "response.mcp_list_tools.failed", { item_id: item.id, output_index: index });
      this.sink.emit("response.output_item.done", { output_index: index, item: structuredClone(item) });
    }
  }

  /** True when the event was an MCP tool's (and became items). */
  onToolEvent(event: Extract<AgentEvent, { event: "tool_start" | "tool_done" }>): boolean {
    const origin = this.context.origin(event.tool);
    const callId = event.call_id;
    if (origin === undefined || callId === undefined) return false;
    if (event.event === "tool_start") {
      const args = JSON.stringify(event.args ?? {});
      const approved = this.context.approved?.callId === callId ? this.context.approved.id : null;
      const item: McpCallItem = { type: "mcp_call", id: this.sink.id("mcp"), server_label: origin.label, name: origin.name, arguments: "", status: "in_progress", output: null, error: null, approval_request_id: approved };
      const index = this.sink.add(item);
      this.sink.emit("response.mcp_call.in_progress", { item_id: item.id, output_index: index });
      item.arguments = args;
      this.sink.emit("response.mcp_call_arguments.delta", { item_id: item.id, output_index: index, delta: args });
      this.sink.emit("response.mcp_call_arguments.done", { item_id: item.id, output_index: index, arguments: args });
      this.calls.set(callId, { item, index });
      return true;
    }
    const open = this.calls.get(callId);
    // Declined, refused or invalid calls never started: the model is told, no call item is made.
    if (open === undefined) return true;
    this.calls.delete(callId);
    const { item, index } = open;
    const ok = event.status === "ok";
    item.status = ok ? "completed" : event.status === "cancelled" ? "incomplete" : "failed";
    if (ok) item.output = event.output ?? event.preview;
    else item.error = event.output ?? event.preview;
    this.sink.emit(ok ? "response.mcp_call.completed" : "response.mcp_call.failed", { item_id: item.id, output_index: index });
    this.sink.emit("response.output_item.done", { output_index: index, item: structuredClone(item) });
    return true;
  }

  /** The call a paused turn waits with, as an approval request item; null when it is not an MCP tool. */
  approvalRequest(tool: string, args: Record<string, unknown>): McpApprovalRequestItem | null {
    const origin = this.context.origin(tool);
    if (origin === undefined || this.context.approvals !== true) return null;
    const item: McpApprovalRequestItem = { type: "mcp_approval_request", id: this.sink.id("mcpr"), server_label: origin.label, name: origin.name, arguments: JSON.stringify(args) };
    const index = this.sink.add(item);
    this.sink.emit("response.output_item.done", { output_index: index, item: structuredClone(item) });
    return item;
  }
}
