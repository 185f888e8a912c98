import type { McpServerSpec } from "./mcp/mcp-server-spec.js";

/** How a tool call ended, as the `tool_done` event reports it (`denied` and `approval_required` come from the agent's approval step). */
export type ToolStatus = "ok" | "error" | "timeout" | "denied" | "approval_required" | "cancelled";

/** A tool as the agent sees it, whatever server provides it. */
export interface ToolDescriptor {
  /** The name exposed to the model (unique across servers; see docs/tools.md for clashes). */
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  inputSchema: Record<string, unknown>;
  /** The MCP server (config key) that provides it. */
  server: string;
  /** The tool's name on its server (differs from `name` after a clash was resolved). */
  remoteName: string;
  requiresApproval: boolean;
}

export interface ToolCallResult {
  status: Extract<ToolStatus, "ok" | "error" | "timeout" | "cancelled">;
  /** Text for the model: the tool's text content, or the error explained. */
  content: string;
  retryable: boolean;
  /** Images the tool returned (MCP `image` content), also named in `content`; for models that take images. */
  images?: ToolImage[];
}

export interface ToolImage {
  mimeType: string;
  /** Base64, as MCP carries it. */
  data: string;
}

export interface ToolCallOptions {
  signal?: AbortSignal;
  /** A long tool's progress reports (MCP `notifications/progress`), as they arrive. */
  onProgress?: (progress: ToolProgress) => void;
  /**
   * A server asked the user for input while this call runs (MCP `elicitation/create`, form mode).
   * Must settle; without it the server is declined. The connection bounds the wait
   * (`mcp.elicitation_timeout_s`, then decline).
   */
  elicit?: (request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationAnswer>;
}

/** An MCP server's question (form mode): `requested_schema` is the flat JSON Schema of the fields. */
export interface ElicitationRequest {
  server: string;
  message: string;
  requested_schema: Record<string, unknown>;
}

/** The user's answer: `content` only with accept. */
export interface ElicitationAnswer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
}

export interface ToolProgress {
  /** Increases with each report; `total`, when the tool knows it, is where it ends. */
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Where tools come from (MCP servers in production, a scripted provider in unit tests).
 * `call` never throws for tool failures: they come back as a status so the loop can tell the model.
 */
export interface ToolProvider {
  /** Connects the servers (idempotent, shared by concurrent callers). */
  start(signal?: AbortSignal): Promise<void>;
  /** The tools an agent may use: names or globs (`*`, `files_*`), `*` = all. */
  list(patterns: readonly string[]): ToolDescriptor[];
  call(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolCallResult>;
  /**
   * Why a call could not run (a path outside the workspace), checked before the user is asked to
   * approve it, so nobody is asked about a call that would be refused; null: it may run. `call`
   * checks again (things may change while the user decides).
   */
  refusal?(name: string, args: Record<string, unknown>): Promise<string | null>;
  /**
   * Why tools the model may expect are missing (a remote server that needs `local-ai mcp login`),
   * one sentence each: told to the model when it calls a tool that is not there.
   */
  missingToolNotes?(): string[];
  /**
   * Settles once the tool lists that servers announced changes of have been fetched again, so the
   * next `list` has them (the agent waits on it before each model step). Rejects only when
   * `signal` aborts the wait.
   */
  refreshed?(signal?: AbortSignal): Promise<void>;
  /** The MCP servers this provider runs that started (for routing prompts and resources). */
  mcpServers?(): string[];
  /**
   * Calls `listener` whenever one of its servers announces a change of its prompts
   * (`notifications/prompts/list_changed`); returns what unsubscribes it.
   */
  onPromptsChanged?(listener: () => void): () => void;
  /** MCP prompts of every ready server (docs/tools.md#prompts); absent: the provider has none. */
  prompts?(signal?: AbortSignal): Promise<McpPromptInfo[]>;
  /** One prompt expanded (`prompts/get`); a RuntimeError `invalid_params` for an unknown server or prompt. */
  getPrompt?(server: string, name: string, args: Record<string, string>, signal?: AbortSignal): Promise<McpMessage[]>;
  /** MCP resources and resource templates of every ready server. */
  resources?(signal?: AbortSignal): Promise<McpResourceList>;
  /** One resource's contents (`resources/read`); a RuntimeError `invalid_params` for an unknown server. */
  readResource?(server: string, uri: string, signal?: AbortSignal): Promise<McpContent[]>;
  close(): Promise<void>;
}

/** Content from an MCP server for the model: text (other kinds already described in it), or an image. */
export type McpContent = { type: "text"; text: string } | { type: "image"; mimeType: string; data: string };

/** One message of an expanded MCP prompt. */
export interface McpMessage {
  role: "user" | "assistant";
  content: McpContent[];
}

export interface McpPromptInfo {
  server: string;
  name: string;
  description?: string;
  arguments: Array<{ name: string; description?: string; required?: boolean }>;
}

export interface McpResourceList {
  resources: Array<{ server: string; uri: string; name: string; description?: string; mime_type?: string }>;
  templates: Array<{ server: string; uri_template: string; name: string; description?: string; mime_type?: string }>;
}

/** Tools a front-door session brings on top of the config's (the composition root composes them). */
export interface SessionToolsRequest {
  /** MCP servers of this session only (started lazily, stopped when the session's provider closes). */
  servers: Record<string, McpServerSpec>;
  /** Providers of the front door's own (ACP: the editor's file and terminal tools). */
  providers: ToolProvider[];
}
