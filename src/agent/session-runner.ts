import type { Logger } from "pino";
import { randomBytes } from "node:crypto";
import type { AgentConfig } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { Engine, LoadProgress } from "../engine/engine.js";
import type { ModelLoadEvent } from "../engine/scheduler/scheduler-types.js";
import { assertSafeId } from "../shared/safe-id.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { Checkpoint } from "../store/store-types.js";
import type { McpPromptInfo, McpResourceList } from "../tools/tool-types.js";
import { inputText } from "./prompt.js";
import { openingMessages } from "./mcp-input.js";
import { CheckpointWriter } from "./checkpoint-writer.js";
import { ElicitationPark } from "./elicitation-park.js";
import { runSessionTurn, type SessionTurn } from "./session-turn.js";
import type { TurnState } from "./turn-state.js";
import { countStatelessPrompt } from "./stateless-prompt-count.js";
import { runStatelessTurn, type StatelessTurnRequest } from "./stateless-turn.js";
import { scopeTools } from "../tools/scoped-tool-provider.js";
import type { SessionRunnerDeps, StatelessTurnOptions, TurnOptions, TurnRequest } from "./turn-request.js";
import type { SessionTurnOutcome, TurnOutcome } from "./turn-outcome.js";

/**
 * The one turn entry for every front door: load the session, warm up once, retrieve memory,
 * run the AgentLoop with a checkpoint after each step, persist the finished turn.
 */
export class SessionRunner {
  /** Calls still running while their turns wait on a server's question (pause mode). */
  private readonly park = new ElicitationPark();

  constructor(private readonly deps: SessionRunnerDeps) {}

  /**
   * Starts the agent's engine and the tool servers; shared by concurrent callers. `onProgress`
   * follows the model's download and load (a terminal draws a progress bar from it); `onModelLoad`
   * hears the scheduler's `model_load` states (queued for memory, loading, loaded); `logger`
   * (the caller's, with its request id) gets the lines of a load this call starts.
   */
  async warmUp(agentName?: string, signal?: AbortSignal, onProgress?: (progress: LoadProgress) => void, keepAlive?: number, onModelLoad?: (event: ModelLoadEvent) => void, logger?: Logger): Promise<void> {
    if (agentName !== undefined) assertSafeId("agent", agentName);
    const [, agent] = this.resolveAgent(agentName);
    const options = { ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}), ...(onModelLoad ? { onModelLoad } : {}), ...(logger ? { logger } : {}) };
    const engine = await this.deps.engineFor(agent.model);
    await Promise.all([engine.warmUp(options), this.deps.tools.start(signal)]);
    if (keepAlive !== undefined) engine.keepAlive?.(keepAlive);
  }

  /** The config's MCP servers that started (for `@server:uri` mentions). */
  mcpServers(): string[] {
    return this.deps.tools.mcpServers?.() ?? [];
  }

  /** The prompts of the config's MCP servers (started first). */
  async mcpPrompts(signal: AbortSignal): Promise<McpPromptInfo[]> {
    await this.deps.tools.start(signal);
    return (await this.deps.tools.prompts?.(signal)) ?? [];
  }

  /** The resources and resource templates of the config's MCP servers (started first). */
  async mcpResources(signal: AbortSignal): Promise<McpResourceList> {
    await this.deps.tools.start(signal);
    return (await this.deps.tools.resources?.(signal)) ?? { resources: [], templates: [] };
  }

  /** The agents configured, the default first, with the model each uses. */
  agents(): Array<{ name: string; model: string }> {
    return Object.entries(this.deps.config.agents).map(([name, agent]) => ({ name, model: agent.model }));
  }

  /** A turn whose conversation the client keeps: nothing is read from or written to data_dir. */
  async runStateless(request: Omit<StatelessTurnRequest, "agent"> & { agent?: string | undefined }, options: StatelessTurnOptions): Promise<TurnOutcome> {
    if (request.agent !== undefined) assertSafeId("agent", request.agent);
    const [agentName, agent] = this.resolveAgent(request.agent, request.model);
    const engine = await this.deps.engineFor(agent.model);
    // The request's keep_alive (or the model's own idle_unload_s) governs the idle time after it.
    try {
      return await this.statelessOn(engine, agentName, agent, request, options);
    } finally {
      engine.keepAlive?.(request.keep_alive ?? null);
    }
  }

  private statelessOn(
    engine: Engine,
    agentName: string,
    agent: AgentConfig,
    request: Omit<StatelessTurnRequest, "agent"> & { agent?: string | undefined },
    options: StatelessTurnOptions,
  ): Promise<TurnOutcome> {
    return runStatelessTurn(
      {
        config: this.deps.config,
        agent,
        engine,
        tools: scopeTools(this.deps.tools, options.toolScope),
        logger: options.logger ?? this.deps.logger,
        ...(this.deps.metrics ? { metrics: this.deps.metrics } : {}),
        warmUp: async (signal, onModelLoad, logger) => {
          await Promise.all([engine.warmUp({ signal, ...(onModelLoad ? { onModelLoad } : {}), ...(logger ? { logger } : {}) }), this.deps.tools.start(signal)]);
        },
      },
      { ...request, agent: agentName },
      options,
    );
  }

  /** The prompt tokens a stateless turn of this request would evaluate (POST /v1/messages/count_tokens). */
  async countPromptTokens(request: Omit<StatelessTurnRequest, "agent"> & { agent?: string | undefined }, signal: AbortSignal): Promise<number> {
    if (request.agent !== undefined) assertSafeId("agent", request.agent);
    const [agentName, agent] = this.resolveAgent(request.agent, request.model);
    const engine = await this.deps.engineFor(agent.model);
    await this.deps.tools.start(signal);
    return countStatelessPrompt({ agent, engine, tools: this.deps.tools }, { ...request, agent: agentName }, signal);
  }

  async runTurn(request: TurnRequest, options: TurnOptions): Promise<SessionTurnOutcome> {
    const userId = assertSafeId("user_id", request.user_id ?? "default_user");
    const sessionId = assertSafeId("session_id", request.session_id ?? randomBytes(4).toString("hex"));
    if (request.agent !== undefined) assertSafeId("agent", request.agent);
    // The user's memory index does not depend on the session: build it while the lock is taken.
    const memoryReady = this.deps.memory.ensureUser(userId);
    memoryReady.catch(() => undefined);
    try {
      return await this.deps.store.withSessionLock(userId, sessionId, () => this.locked(userId, sessionId, request, options, memoryReady), options.signal);
    } finally {
      await this.keepAliveAfter(request);
    }
  }

  /** After a turn: the request's keep_alive (or, without one, the model's idle_unload_s) sets how long its model stays loaded. */
  private async keepAliveAfter(request: TurnRequest): Promise<void> {
    try {
      const [, agent] = this.resolveAgent(request.agent, request.model);
      (await this.deps.engineFor(agent.model)).keepAlive?.(request.keep_alive ?? null);
    } catch {
      // An unknown agent already failed the turn; a registry shutting down has nothing to keep.
    }
  }

  private async locked(
    userId: string,
    sessionId: string,
    request: TurnRequest,
    options: TurnOptions,
    memoryReady: Promise<void>,
  ): Promise<SessionTurnOutcome> {
    const { store } = this.deps;
    const warnings: string[] = [];
    const checkpoint = await store.readCheckpoint(userId, sessionId);
    let turn: TurnState;
    let traceId: string;
    let agentName: string;
    let userInput: string;
    let resumeDecision: "approve" | "decline" | undefined;
    let resumeElicitation: SessionTurn["resumeElicitation"];
    const parkKey = `${userId}/${sessionId}`;
    if (request.resume === true) {
      if (checkpoint === null) throw new RuntimeError("invalid_request", `Nothing to resume in session ${sessionId}: it has no interrupted or paused turn`);
      [agentName] = this.resolveAgent(checkpoint.agent);
      turn = { messages: checkpoint.messages, step: checkpoint.step, parseErrors: checkpoint.parse_errors };
      traceId = checkpoint.trace_id;
      userInput = checkpoint.user_input;
      // A turn paused on a server's question resumes with the answer (none: cancel), not a decision.
      if (checkpoint.status === "paused" && checkpoint.pending?.elicitation !== undefined) resumeElicitation = { answer: request.elicitation ?? { action: "cancel" }, parked: this.park.take(parkKey) };
      else if (checkpoint.status === "paused") resumeDecision = request.approve_execution === true ? "approve" : "decline";
    } else {
      if (checkpoint !== null) {
        warnings.push(`discarded the unfinished turn ${checkpoint.trace_id} of this session (send resume: true to continue such a turn)`);
        await store.clearCheckpoint(userId, sessionId);
      }
      if (this.park.drop(parkKey)) (options.logger ?? this.deps.logger).info({ session_id: sessionId }, "a new turn dropped the paused one: its server's question is declined");
      let agent: AgentConfig;
      [agentName, agent] = this.resolveAgent(request.agent);
      const messages = await this.openingMessages(request, agent, options);
      const first = messages[0];
      userInput = first?.role === "user" ? inputText(first.content) : "";
      turn = { messages, step: 0, parseErrors: 0 };
      traceId = randomBytes(8).toString("hex");
    }
    const log = (options.logger ?? this.deps.logger).child({ trace_id: traceId, session_id: sessionId, user_id: userId, agent: agentName });
    const writer = new CheckpointWriter((checkpoint) => store.writeCheckpoint(userId, sessionId, checkpoint));
    // A snapshot now: the turn moves on while an earlier write is still queued.
    const save = (status: Checkpoint["status"], pending: Checkpoint["pending"]): Promise<void> =>
      writer.save({
        version: 1, trace_id: traceId, agent: agentName, user_input: userInput, messages: [...turn.messages],
        step: turn.step, parse_errors: turn.parseErrors, status, pending, updated_at: new Date().toISOString(),
      });
    // The first checkpoint makes a cancel or crash during the first step resumable. It is not
    // awaited here (fsync + rename + fsync cost milliseconds of time to first token); every later
    // write queues behind it and the turn flushes them before it finishes.
    void save("running", null).catch(() => undefined);
    try {
      const agent = this.resolveAgent(agentName, request.model)[1];
      return await runSessionTurn(this.deps, { userId, sessionId, request, options, warnings, turn, traceId, agentName, agent, userInput, resumeDecision, resumeElicitation,
        parkElicitation: options.pauseForElicitation === true ? (parked) => this.park.put(parkKey, parked) : undefined, save, log, writer, memoryReady });
    } catch (error) {
      await writer.flush().catch(() => undefined);
      // A cancelled or crashed turn keeps its checkpoint (resume: true continues it). A new turn
      // that failed before any progress (model missing, engine down) leaves nothing to resume.
      if (!options.signal.aborted && request.resume !== true && turn.messages.length <= 1) {
        await store.clearCheckpoint(userId, sessionId).catch(() => undefined);
      }
      throw error;
    }
  }

  /** The user's input as the turn's first messages (MCP prompts and resources expanded). */
  private async openingMessages(request: TurnRequest, agent: AgentConfig, options: TurnOptions): Promise<ChatMessage[]> {
    const plain = request.prompt === undefined && (typeof request.input !== "object" || !request.input.some((part) => part.type === "resource"));
    if (plain) return openingMessages(this.deps.tools, request, { images: false, signal: options.signal });
    const engine = await this.deps.engineFor(agent.model);
    return openingMessages(options.tools ?? this.deps.tools, request, { images: engine.capabilities.images, signal: options.signal });
  }

  /** The finished turns' messages, oldest first; never waits for a running turn when a reader is wired. */
  async history(sessionId: string, userId = "default_user"): Promise<ChatMessage[]> {
    assertSafeId("session_id", sessionId);
    assertSafeId("user_id", userId);
    const { history, store } = this.deps;
    if (history !== undefined) return (await history.readTurns(userId, sessionId)).flatMap((entry) => entry.messages);
    return store.withSessionLock(userId, sessionId, async () => (await store.loadHistory(userId, sessionId)).messages);
  }

  /** The call a paused turn of the session waits on (a restarted front door picks the pause up). */
  async pausedCall(sessionId: string, userId = "default_user"): Promise<{ tool: string; args: Record<string, unknown> } | null> {
    const checkpoint = await this.deps.store.readCheckpoint(assertSafeId("user_id", userId), assertSafeId("session_id", sessionId));
    if (checkpoint?.status !== "paused" || checkpoint.pending === null) return null;
    return { tool: checkpoint.pending.call.name, args: checkpoint.pending.args };
  }

  /** Drops a paused turn without running its call: nothing is added to the history. */
  async discardPaused(sessionId: string, userId = "default_user", signal?: AbortSignal): Promise<void> {
    const { store } = this.deps;
    await store.withSessionLock(assertSafeId("user_id", userId), assertSafeId("session_id", sessionId), async () => {
      const checkpoint = await store.readCheckpoint(userId, sessionId);
      if (checkpoint?.status === "paused") await store.clearCheckpoint(userId, sessionId);
      this.park.drop(`${userId}/${sessionId}`);
    }, signal);
  }

  /** The agent, on `model` instead of its own where one is given (a downloaded model served on demand). */
  private resolveAgent(name: string | undefined, model?: string): [string, AgentConfig] {
    const [agentName, agent] = this.namedAgent(name);
    if (model === undefined) return [agentName, agent];
    if (!(model in this.deps.config.llama.models)) {
      const known = Object.keys(this.deps.config.llama.models);
      throw new RuntimeError("invalid_params", `Unknown model "${model}"; models: ${known.join(", ") || "none"}`, { details: { param: "model", model, known } });
    }
    return [agentName, { ...agent, model }];
  }

  private namedAgent(name: string | undefined): [string, AgentConfig] {
    const agents = Object.entries(this.deps.config.agents);
    if (name === undefined) {
      const first = agents[0];
      if (first === undefined) throw new RuntimeError("config_invalid", "No agent is configured under agents");
      return first;
    }
    const agent = this.deps.config.agents[name];
    if (agent === undefined) {
      throw new RuntimeError("invalid_params", `Unknown agent "${name}". Configured: ${agents.map(([n]) => n).join(", ") || "none"}`, { details: { param: "agent" } });
    }
    return [name, agent];
  }
}
