import type { ClientCapabilities } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import type { AcpDeps } from "./acp-deps.js";
import type { AcpSessions } from "./acp-sessions.js";
import type { AcpMcpLogins } from "./mcp-login-offer.js";

/** ACP sessions belong to the user every front door defaults to (memory is shared with them). */
export const ACP_USER = "default_user";

/** What the handlers of one connection share. */
export interface AcpConnectionState {
  deps: AcpDeps;
  sessions: AcpSessions;
  /** From `initialize`: decides which editor tools a session gets, and whether notices are shown. */
  clientCapabilities: ClientCapabilities;
  logger: Logger;
  /** OAuth logins of config MCP servers started from this connection. */
  logins: AcpMcpLogins;
}
