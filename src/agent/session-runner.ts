import type { Logger } from "pino";
import { randomBytes } from "node:crypto";
import type { AgentConfig } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { Engine, LoadProgress } from "../engine/engine.js";
import type { ModelLoadEvent } from "../engine/scheduler/scheduler-types.js";
import { assertSafeId } from "../shared/safe-id.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { McpPromptInfo, McpResourceList } from "../tools/tool-types.js";
import { openingMessages } from "./mcp-input.js";
import { ElicitationPark } from "./elicitation-park.js";
import { planSessionTurn, type SessionTurnHost, type SessionTurnStart } from "./session-turn.js";
import { countStatelessPrompt } from "./stateless-prompt-count.js";
import { planStatelessTurn, type StatelessTurnRequest } from "./stateless-turn.js";
import { runTurn, type TurnCoreDeps } from "./turn-core.js";
import { TurnMeter } from "./turn-meter.js";
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
  private readonly core: TurnCoreDeps;

  constructor(private readonly deps: SessionRunnerDeps) {
    this.core = { config: deps.config, meter: new TurnMeter(deps.metrics), ...(deps.metrics ? { metrics: deps.metrics } : {}) };
  }

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
      const tools = scopeTools(this.deps.tools, options.toolScope);
      const plan = planStatelessTurn({ agentName, agent, engine, tools, logger: options.logger ?? this.deps.logger }, { ...request, agent: agentName });
      return await runTurn(this.core, plan, options);
    } finally {
      engine.keepAlive?.(request.keep_alive ?? null);
    }
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
    const ran: { engine?: Engine } = {};
    try {
      return await this.deps.store.withSessionLock(userId, sessionId, () => this.locked({ userId, sessionId, request, options, memoryReady }, ran), options.signal);
    } finally {
      // The request's keep_alive (or, without one, the model's idle_unload_s) sets how long the turn's model stays loaded.
      ran.engine?.keepAlive?.(request.keep_alive ?? null);
    }
  }

  private async locked(start: SessionTurnStart, ran: { engine?: Engine }): Promise<SessionTurnOutcome> {
    const { userId, sessionId, request, options } = start;
    const host: SessionTurnHost = {
      deps: this.deps,
      park: this.park,
      resolveAgent: (name, model) => this.resolveAgent(name, model),
      openingMessages: (...args) => this.openingMessages(...args),
    };
    const { plan, writer } = await planSessionTurn(host, start);
    try {
      ran.engine = await this.deps.engineFor(plan.agent.model);
      const outcome = await runTurn(this.core, { ...plan, engine: ran.engine }, options);
      return { ...outcome, session_id: sessionId };
    } catch (error) {
      await writer.flush().catch(() => undefined);
      // A cancelled or crashed turn keeps its checkpoint (resume: true continues it). A new turn
      // that failed before any progress (model missing, engine down) leaves nothing to resume.
      if (!options.signal.aborted && request.resume !== true && plan.turn.messages.length <= 1) {
        await this.deps.store.clearCheckpoint(userId, sessionId).catch(() => undefined);
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
