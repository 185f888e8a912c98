import type { Logger } from "pino";
import { loginCommand } from "../tools/mcp/oauth/login-required.js";
import type { McpLogins } from "./acp-deps.js";
import type { AcpSession } from "./acp-session.js";

/**
 * OAuth logins for the config's remote MCP servers, started from ACP (docs/acp.md#mcp-logins):
 * when a prompt turn starts and a server needs a login, the editor is shown the authorization URL
 * as an agent message (every editor shows those; ACP's `authenticate` is for the agent itself),
 * and the loopback redirect is awaited in the background as `local-ai mcp login` does. The turn
 * goes on without the server; once the login completes, the server's tools are offered from the
 * next listing, and the session that showed the URL is told. One login per server at a time,
 * per connection; all are ended when the connection closes.
 */
export class AcpMcpLogins {
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly logger: Logger) {}

  /**
   * Starts a login for each server that needs one and has none running, once the servers were
   * tried (the session's start); resolves then, never waiting for a login.
   */
  async offer(logins: McpLogins, session: AcpSession): Promise<void> {
    try {
      await session.tools.start();
    } catch {
      return;
    }
    for (const server of logins.needing()) {
      if (this.running.has(server)) continue;
      const controller = new AbortController();
      this.running.set(server, controller);
      void this.run(logins, session, server, controller).finally(() => this.running.delete(server));
    }
  }

  /** The connection closed: the loopback listeners stop. */
  abortAll(): void {
    for (const controller of this.running.values()) controller.abort("the ACP connection closed");
  }

  private async run(logins: McpLogins, session: AcpSession, server: string, controller: AbortController): Promise<void> {
    const log = this.logger.child({ server, session_id: session.id });
    const say = (text: string): void => session.updates.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text }, messageId: `mcp-login-${server}-${Date.now()}` });
    try {
      await logins.login(
        server,
        (url) => {
          log.info("MCP login: authorization URL sent to the editor");
          say(`MCP server "${server}" needs a login. To authorize local-ai, open this URL in a browser:\n\n${url.href}\n\n(Or run \`${loginCommand(server)}\` in a terminal.)\n\n`);
        },
        controller.signal,
      );
      log.info("MCP login completed from ACP");
      say(`Logged in to MCP server "${server}": its tools are available from the next step.\n\n`);
    } catch (error) {
      if (controller.signal.aborted) return;
      const reason = error instanceof Error ? error.message : String(error);
      log.warn({ err: error }, "MCP login from ACP failed");
      say(`The login to MCP server "${server}" did not complete (${reason}). Run \`${loginCommand(server)}\` in a terminal, then prompt again.\n\n`);
    }
  }
}
