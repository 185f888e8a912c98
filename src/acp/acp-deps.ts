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
  /** A model's context window in tokens, for `usage_update.size` (the loaded model's, once loaded). */
  contextSize(model: string): number;
  /** What the session's model option offers (session-config.ts). */
  models: AcpModels;
  /** Deletes a stored session: history, checkpoints, meta, KV states, memory entries. False when none was stored. */
  deleteSession(sessionId: string): Promise<boolean>;
  /** OAuth logins for the config's remote MCP servers, run from ACP (see mcp-login-offer.ts). */
  mcpLogins: McpLogins;
}

/** The models a session can run on: the config's agents and the downloaded models served on demand. */
export interface AcpModels {
  /** The configured agents, the default first, each with its model. */
  agents(): Array<{ name: string; model: string }>;
  /** Downloaded models served on demand (llama.serve_downloaded), by file name; empty when not served. */
  downloaded(): Promise<string[]>;
  /** Whether a `llama.models` model thinks (its chat template has a thinking part; an openai upstream: true). */
  thinks(model: string): Promise<boolean>;
  /** Whether its engine can turn thinking off (not the embedded engine: it has no switch; the thoughts are then only hidden). */
  canStopThinking(model: string): boolean;
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
