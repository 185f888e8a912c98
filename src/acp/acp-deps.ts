import type { Logger } from "pino";
import type { SessionRunner } from "../agent/session-runner.js";
import type { SessionCatalog } from "../store/store-types.js";
import type { SessionToolsRequest, ToolProvider } from "../tools/tool-types.js";

/** What the ACP front door needs of the runtime, built by the composition root on first use. */
export interface AcpCore {
  runner: SessionRunner;
  catalog: SessionCatalog;
  sessionTools(request: SessionToolsRequest): ToolProvider;
  /** app.max_tool_output_bytes (a command's retained output). */
  maxToolOutputBytes: number;
  /** The default agent's context window in tokens, for `usage_update.size` (the loaded model's, once loaded). */
  contextSize(): number;
  /** OAuth logins for the config's remote MCP servers, run from ACP (see mcp-login-offer.ts). */
  mcpLogins: McpLogins;
}

/** What ACP needs to log in to a config server that needs it. */
export interface McpLogins {
  /** The config's remote servers whose connection found no usable login. */
  needing(): string[];
  /**
   * `local-ai mcp login <server>`'s flow in this process: `showUrl` gets the authorization URL,
   * then the loopback redirect is awaited (bounded); once tokens are stored the server is
   * connected again, its tools offered from the next listing. Rejects when it does not complete.
   */
  login(server: string, showUrl: (url: URL) => void, signal: AbortSignal): Promise<void>;
}

export interface AcpDeps {
  agentInfo: { name: string; version: string };
  logger: Logger;
  /** Throws config_missing / config_invalid (as RuntimeError) without a valid config. */
  core(): Promise<AcpCore>;
  /**
   * Whether the default agent's model takes images (`promptCapabilities.image`), from the config
   * alone: initialize must not wait for the runtime. False without a valid config (initialize
   * still answers; session/new says what is wrong).
   */
  takesImages(): Promise<boolean>;
  /** stdio.coalesce_ms: text deltas merged into one `session/update` within this window. */
  coalesceMs: number;
}
