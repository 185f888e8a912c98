/**
 * `import { LocalAiClient } from "local-ai-core/client"`: a typed, supervised client for
 * `local-ai serve-stdio`, for Electron main processes and any Node >= 20.5 program. It imports
 * nothing of the engine (no node-llama-cpp, no MCP SDK, no zod at run time): only node: modules
 * and src/shared. docs/embedding.md is its guide.
 */
export { LocalAiClient } from "./local-ai-client.js";
export type { CallOptions, LocalAiClientEvents, LocalAiClientOptions } from "./local-ai-client.js";
export type { ExitInfo, RestartInfo } from "./child-supervisor.js";
export type { ChatTurn } from "./chat-turn.js";
export { LocalAiError, isLocalAiError } from "./local-ai-error.js";
export type { ClientErrorCode, LocalAiErrorCode } from "./local-ai-error.js";
export type { ClientLogger, LogLevel, LogRecord } from "./log-record.js";
export type { RestartOptions } from "./restart-policy.js";
export { resolveCliPath } from "./default-command.js";
export type * from "./protocol-types.js";
