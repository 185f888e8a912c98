import { PROTOCOL_VERSION, type InitializeRequest, type InitializeResponse } from "@agentclientprotocol/sdk";
import type { AcpConnectionState } from "./acp-connection-state.js";

/**
 * `initialize`: ACP v1 (the only version there is; a client asking for another gets 1 and decides),
 * sessions that load, resume, list, close and delete, images only when the default agent's model takes them,
 * embedded context, MCP servers over stdio, HTTP and SSE, and no authentication (it is local).
 */
export async function initialize(state: AcpConnectionState, params: InitializeRequest): Promise<InitializeResponse> {
  state.clientCapabilities = params.clientCapabilities ?? {};
  const images = await state.deps.takesImages().catch((error: unknown) => {
    state.logger.debug({ err: error }, "model capabilities unavailable at initialize");
    return false;
  });
  state.logger.info({ client: params.clientInfo ?? null, requested_version: params.protocolVersion, capabilities: state.clientCapabilities }, "ACP client initialized");
  return {
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: images, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, close: {}, resume: {}, delete: {} },
    },
    agentInfo: { name: state.deps.agentInfo.name, title: "local-ai", version: state.deps.agentInfo.version },
    authMethods: [],
  };
}
