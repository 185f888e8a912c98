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
}

/** Facts about the default agent's model that ACP advertises (prompt capabilities, usage). */
export interface AcpModelFacts {
  images: boolean;
  /** The context window in tokens, for `usage_update.size` (the loaded model's, once it is loaded). */
  contextSize(): number;
}

export interface AcpDeps {
  agentInfo: { name: string; version: string };
  logger: Logger;
  /** Throws config_missing / config_invalid (as RuntimeError) without a valid config. */
  core(): Promise<AcpCore>;
  /** null when there is no valid config (initialize still answers; session/new says what is wrong). */
  modelFacts(): Promise<AcpModelFacts | null>;
  /** stdio.coalesce_ms: text deltas merged into one `session/update` within this window. */
  coalesceMs: number;
}
