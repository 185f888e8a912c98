import { randomBytes } from "node:crypto";
import path from "node:path";
import {
  RequestError,
  type AgentContext,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  type McpServer,
  type NewSessionRequest,
  type NewSessionResponse,
  type ResumeSessionRequest,
  type SessionConfigOption,
  type SessionInfo,
} from "@agentclientprotocol/sdk";
import { isSafeId } from "../shared/safe-id.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { ACP_USER, type AcpConnectionState } from "./acp-connection-state.js";
import type { AcpCore } from "./acp-deps.js";
import { AcpSession } from "./acp-session.js";
import { EditorToolProvider } from "./editor-tools.js";
import { historyUpdates } from "./history-replay.js";
import { advertisePrompts } from "./prompt-commands.js";
import { choiceOfMeta, defaultChoice, metaWithChoice, sessionOptions, type SessionChoice } from "./session-config.js";
import { takesBooleans } from "./session-config-request.js";
import { sessionMcpServers } from "./session-mcp-servers.js";

const LIST_PAGE = 50;

/** `session/new`: a session in data_dir (its folder is written with its first finished turn), on the default agent. */
export async function newSession(state: AcpConnectionState, params: NewSessionRequest, client: AgentContext): Promise<NewSessionResponse> {
  const cwd = checkCwd(params.cwd);
  const core = await state.deps.core();
  const sessionId = randomBytes(8).toString("hex");
  const offered = await sessionOptions(core.models, defaultChoice(core.models), takesBooleans(state));
  await open(state, core, { sessionId, cwd, mcpServers: params.mcpServers, choice: offered.choice }, client);
  state.logger.info({ session_id: sessionId, cwd, mcp_servers: params.mcpServers.length }, "ACP session created");
  return { sessionId, configOptions: offered.options };
}

/** `session/load`: the stored conversation is replayed as `session/update`s, then the answer (with the stored choice). */
export async function loadSession(state: AcpConnectionState, params: LoadSessionRequest, client: AgentContext): Promise<{ configOptions: SessionConfigOption[] }> {
  return reopen(state, { ...params, mcpServers: params.mcpServers }, client, true);
}

/** `session/resume`: `session/load` without the replay (the editor still shows the conversation). */
export async function resumeSession(state: AcpConnectionState, params: ResumeSessionRequest, client: AgentContext): Promise<{ configOptions: SessionConfigOption[] }> {
  return reopen(state, { sessionId: params.sessionId, cwd: params.cwd, mcpServers: params.mcpServers ?? [] }, client, false);
}

async function reopen(state: AcpConnectionState, params: { sessionId: string; cwd: string; mcpServers: readonly McpServer[] }, client: AgentContext, replay: boolean): Promise<{ configOptions: SessionConfigOption[] }> {
  const cwd = checkCwd(params.cwd);
  const { sessionId } = params;
  // An id that could not be a folder name cannot name a stored session.
  if (!isSafeId(sessionId)) throw RequestError.sessionNotFound(sessionId);
  const core = await state.deps.core();
  const meta = await core.catalog.readMeta(ACP_USER, sessionId);
  if (meta === null && !(await core.catalog.exists(ACP_USER, sessionId))) throw RequestError.sessionNotFound(sessionId);
  const offered = await sessionOptions(core.models, choiceOfMeta(meta, core.models), takesBooleans(state));
  if (offered.fellBack !== null) state.logger.warn({ session_id: sessionId }, `the session's model choice ${offered.fellBack}`);
  const messages = replay ? await core.runner.history(sessionId, ACP_USER) : [];
  const session = await open(state, core, { sessionId, cwd, mcpServers: params.mcpServers, choice: offered.choice }, client);
  for (const update of historyUpdates(messages, cwd)) session.updates.send(update);
  await session.updates.flushed();
  if (meta !== null && (meta.cwd !== cwd || offered.fellBack !== null)) await core.catalog.writeMeta(ACP_USER, sessionId, metaWithChoice({ ...meta, cwd }, offered.choice));
  state.logger.info({ session_id: sessionId, cwd, messages: messages.length, replayed: replay }, replay ? "ACP session loaded" : "ACP session resumed");
  return { configOptions: offered.options };
}

/** `session/list`: sessions opened through ACP, most recent first, optionally in one cwd; 50 a page. */
export async function listSessions(state: AcpConnectionState, params: ListSessionsRequest): Promise<ListSessionsResponse> {
  const core = await state.deps.core();
  const filter = params.cwd === undefined || params.cwd === null ? null : path.resolve(params.cwd);
  const all = (await core.catalog.listMeta(ACP_USER))
    .filter(({ meta }) => meta.cwd !== null && (filter === null || path.resolve(meta.cwd) === filter))
    .sort((a, b) => b.meta.updated_at.localeCompare(a.meta.updated_at) || a.sessionId.localeCompare(b.sessionId));
  const start = params.cursor === undefined || params.cursor === null ? 0 : offsetOf(params.cursor);
  const page = all.slice(start, start + LIST_PAGE).map(({ sessionId, meta }): SessionInfo => ({ sessionId, cwd: meta.cwd as string, title: meta.title, updatedAt: meta.updated_at }));
  return { sessions: page, ...(start + LIST_PAGE < all.length ? { nextCursor: Buffer.from(String(start + LIST_PAGE)).toString("base64url") } : {}) };
}

/** `session/close`: its prompt is cancelled and its own MCP servers stop; the stored session stays. */
export async function closeSession(state: AcpConnectionState, sessionId: string): Promise<Record<string, never>> {
  await state.sessions.close(sessionId);
  state.logger.info({ session_id: sessionId }, "ACP session closed");
  return {};
}

/**
 * `session/delete`: an open session is closed first (its prompt cancelled and awaited, its own
 * MCP servers stopped), then everything stored of it goes: history, checkpoints, meta, KV states,
 * memory entries. Unknown to `list`, `load` and `resume` from then on; unknown here: -32002.
 */
export async function deleteSession(state: AcpConnectionState, sessionId: string): Promise<Record<string, never>> {
  if (!isSafeId(sessionId)) throw RequestError.sessionNotFound(sessionId);
  const core = await state.deps.core();
  const session = state.sessions.find(sessionId);
  if (session !== undefined) {
    session.cancel("session deleted");
    await session.idle();
    await state.sessions.close(sessionId);
  }
  const removed = await core.deleteSession(sessionId);
  if (!removed && session === undefined) throw RequestError.sessionNotFound(sessionId);
  state.logger.info({ session_id: sessionId, stored: removed }, "ACP session deleted");
  return {};
}

async function open(state: AcpConnectionState, core: AcpCore, spec: { sessionId: string; cwd: string; mcpServers: readonly McpServer[]; choice: SessionChoice }, client: AgentContext): Promise<AcpSession> {
  const { fs, terminal } = state.clientCapabilities;
  const editor = new EditorToolProvider({
    client,
    sessionId: spec.sessionId,
    cwd: spec.cwd,
    capabilities: { readTextFile: fs?.readTextFile === true, writeTextFile: fs?.writeTextFile === true, terminal: terminal === true },
    maxOutputBytes: core.maxToolOutputBytes,
  });
  const tools = core.sessionTools({ servers: sessionMcpServers(spec.mcpServers, spec.cwd), providers: [editor] });
  const session = new AcpSession(spec.sessionId, spec.cwd, tools, client, state.logger.child({ session_id: spec.sessionId }), spec.choice);
  await state.sessions.add(session);
  const log = state.logger.child({ session_id: spec.sessionId });
  // A server's prompts/list_changed updates the commands at once, during a turn or between turns.
  session.unwatchPrompts = tools.onPromptsChanged?.(() => void advertisePrompts(session, log)) ?? null;
  // The servers start now, so the first prompt finds them ready; one that fails is logged and left out.
  tools.start().then(
    () => advertisePrompts(session, log),
    (error: unknown) => state.logger.warn({ err: error, session_id: spec.sessionId }, "session tools failed to start"),
  );
  return session;
}

function checkCwd(cwd: string): string {
  if (!path.isAbsolute(cwd)) throw new RuntimeError("invalid_params", `cwd must be an absolute path, got ${JSON.stringify(cwd.slice(0, 200))}`, { details: { param: "cwd" } });
  return path.resolve(cwd);
}

function offsetOf(cursor: string): number {
  const offset = Number(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!Number.isInteger(offset) || offset < 0) throw new RuntimeError("invalid_params", "cursor is not one this agent gave out", { details: { param: "cursor" } });
  return offset;
}
