import { agent, methods, type AgentApp } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import type { AcpConnectionState } from "./acp-connection-state.js";
import { toRequestError } from "./acp-errors.js";
import { initialize } from "./acp-initialize.js";
import { runPrompt } from "./prompt-turn.js";
import { setConfigOption } from "./session-config-request.js";
import { closeSession, deleteSession, listSessions, loadSession, newSession, resumeSession } from "./session-setup.js";

/**
 * The agent side of the connection on the official SDK: it parses and validates every message
 * (-32700, -32600, -32601, -32602 as the protocol defines them), gates everything behind
 * `initialize`, and routes each method here. Handlers throw RuntimeErrors; they become ACP's
 * JSON-RPC errors in one place (acp-errors.ts).
 */
export function createAcpAgent(state: AcpConnectionState): AgentApp {
  const { logger } = state;
  return agent({ name: "local-ai" })
    .onRequest(methods.agent.initialize, (ctx) => answer(logger, ctx.method, () => initialize(state, ctx.params)))
    .onRequest(methods.agent.session.new, (ctx) => answer(logger, ctx.method, () => newSession(state, ctx.params, ctx.client)))
    .onRequest(methods.agent.session.load, (ctx) => answer(logger, ctx.method, () => loadSession(state, ctx.params, ctx.client)))
    .onRequest(methods.agent.session.list, (ctx) => answer(logger, ctx.method, () => listSessions(state, ctx.params)))
    .onRequest(methods.agent.session.resume, (ctx) => answer(logger, ctx.method, () => resumeSession(state, ctx.params, ctx.client)))
    .onRequest(methods.agent.session.close, (ctx) => answer(logger, ctx.method, () => closeSession(state, ctx.params.sessionId)))
    .onRequest(methods.agent.session.delete, (ctx) => answer(logger, ctx.method, () => deleteSession(state, ctx.params.sessionId)))
    .onRequest(methods.agent.session.setConfigOption, (ctx) => answer(logger, ctx.method, () => setConfigOption(state, ctx.params)))
    .onRequest(methods.agent.session.prompt, (ctx) => answer(logger, ctx.method, () => runPrompt(state, ctx.params, ctx.signal)))
    .onNotification(methods.agent.session.cancel, (ctx) => {
      const session = state.sessions.find(ctx.params.sessionId);
      if (session === undefined) logger.debug({ session_id: ctx.params.sessionId }, "session/cancel for a session that is not open");
      session?.cancel();
    });
}

/** Runs a handler; what it throws leaves as ACP's error for it, unexpected failures logged with their stack. */
async function answer<T>(logger: Logger, method: string, handle: () => Promise<T>): Promise<T> {
  try {
    return await handle();
  } catch (thrown) {
    const error = toRequestError(thrown);
    if (error.code === -32603 && (error.data as { code?: string } | undefined)?.code === "internal_error") {
      logger.error({ err: thrown, method }, "ACP method failed unexpectedly");
      error.message = `Internal error in "${method}"; the details are in the log`;
    } else {
      logger.debug({ method, code: error.code, message: error.message }, "ACP method answered an error");
    }
    throw error;
  }
}
