import { methods, type ClientCapabilities, type ElicitationSchema } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import type { ElicitationCallback } from "../agent/events.js";
import type { AcpSession } from "./acp-session.js";

/** Whether the editor said in `initialize` that it shows form-mode elicitations. */
export function canElicit(capabilities: ClientCapabilities): boolean {
  const form = capabilities.elicitation?.form;
  return form !== undefined && form !== null;
}

/**
 * An MCP server's question (`elicitation/create`, form mode) forwarded to the editor as ACP's
 * own `elicitation/create`, scoped to the session and the tool call that asked. The editor's
 * answer goes back to the server; a cancelled turn withdraws the question (the server gets a
 * decline), and an editor that fails the request counts as a decline.
 */
export function elicitationAsker(session: AcpSession, logger: Logger): ElicitationCallback {
  return async (request, signal) => {
    try {
      const response = await session.client.request(
        methods.client.elicitation.create,
        { sessionId: session.id, toolCallId: request.call_id, mode: "form", message: request.message, requestedSchema: request.requested_schema as ElicitationSchema },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      if (response.action === "accept") return { action: "accept", content: "content" in response && response.content !== null && typeof response.content === "object" ? (response.content as Record<string, string | number | boolean | string[]>) : {} };
      return { action: response.action === "cancel" ? "cancel" : "decline" };
    } catch (error) {
      if (!signal.aborted) logger.warn({ err: error, server: request.server }, "elicitation/create failed; the server's question is declined");
      return { action: "decline" };
    }
  };
}
