import type { ModelLoadEvent } from "../engine/scheduler/scheduler-types.js";
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { AgentConfig, Config } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { SamplingOverrides } from "../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { Engine } from "../engine/engine.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { MetricsRecorder } from "../shared/metrics-recorder.js";
import type { ToolProvider } from "../tools/tool-types.js";
import { runAgentLoop } from "./agent-loop.js";
import type { EmitEvent } from "./events.js";
import { fitContext } from "./context-budget.js";
import { inputText } from "./prompt.js";
import { TurnTally, type TurnOutcome } from "./turn-outcome.js";
import type { TurnState } from "./turn-state.js";
import { assertEngineAccepts, loopLimits, resolveSampling, samplingWarnings, toolSpecsOf } from "./turn-settings.js";

/** A turn whose conversation the client keeps (OpenAI clients resend it whole every time). */
export interface StatelessTurnRequest {
  agent: string;
  /** A `llama.models` name the agent runs on instead of its own model (a downloaded model served on demand). */
  model?: string;
  /** The whole conversation, system messages included, in order. */
  messages: ChatMessage[];
  /** The client's own functions: offered instead of the agent's tools, run by the client. */
  clientTools?: ToolSpec[];
  overrides?: SamplingOverrides;
  approve_execution?: boolean;
  /** The KV cache key of this conversation (the client's prompt_cache_key): engines keep its cache warm. */
  cacheKey?: string;
  /** "disabled": a conversation that does not fit is a `context_overflow` instead of trimmed history. */
  truncation?: "auto" | "disabled";
  /** Seconds the model stays loaded once idle after this request (0: unload then; -1: never); absent: its idle_unload_s. */
  keep_alive?: number;
  /**
   * Tools of this request that run inside the turn (the Responses API's `mcp` tools), offered
   * instead of the agent's own, beside `clientTools`. The caller starts and closes them.
   */
  tools?: ToolProvider;
  /**
   * The front door keeps the conversation (the Responses store): a gated call pauses the turn
   * (`paused`, the conversation so far in `turn_messages`), and a later request resumes it.
   */
  pausable?: boolean;
  /** Resuming a paused conversation: its last calls are unanswered; the first is approved or declined. */
  resumeDecision?: "approve" | "decline";
}

/** A stateless turn's cancel signal and event sink; `logger`: the front door's for this request. */
export interface StatelessTurnOptions {
  signal: AbortSignal;
  emit: EmitEvent;
  logger?: Logger | undefined;
}

export interface StatelessTurnDeps {
  config: Config;
  agent: AgentConfig;
  engine: Engine;
  tools: ToolProvider;
  logger: Logger;
  metrics?: MetricsRecorder;
  /** `onModelLoad`: why the model waits (queued for memory, loading), for `model_load` events. */
  warmUp(signal: AbortSignal, onModelLoad?: (event: ModelLoadEvent) => void, logger?: Logger): Promise<void>;
}

/**
 * Nothing is read from or written to data_dir: no session, no history, no checkpoint, no memory
 * (snippets of other conversations must not leak into a client's own). The agent's MCP tools
 * still run inside the turn unless the client brings its own.
 */
export async function runStatelessTurn(deps: StatelessTurnDeps, request: StatelessTurnRequest, options: StatelessTurnOptions): Promise<TurnOutcome> {
  const { agent, engine, config } = deps;
  const tally = new TurnTally();
  const emit = tally.wrap(options.emit);
  const model = config.llama.models[agent.model];
  if (model === undefined) throw new RuntimeError("config_invalid", `agents.${request.agent}.model names an unknown model "${agent.model}"`);
  const { system, history, turn: turnMessages } = splitConversation(agent.system_prompt, request.messages, request.resumeDecision !== undefined);
  const turnStart = turnMessages.length;
  assertEngineAccepts(engine, request.messages);
  const sampling = resolveSampling(agent, request.overrides);
  const warnings = samplingWarnings(engine, request.overrides);
  const traceId = randomBytes(8).toString("hex");
  const userMessage = turnMessages[0];
  const userInput = userMessage?.role === "user" ? inputText(userMessage.content) : "";
  const log = deps.logger.child({ trace_id: traceId, agent: request.agent, stateless: true });

  emit({ event: "run_start", user_input: userInput, trace_id: traceId, session_id: null, agent: request.agent });
  await deps.warmUp(options.signal, (load) => emit({ event: "model_load", step: 0, ...load }), log);
  emit({ event: "memory_start", snippets: 0 });
  const tools = request.tools ?? deps.tools;
  const descriptors = request.tools !== undefined ? request.tools.list(["*"]) : request.clientTools === undefined ? deps.tools.list(agent.tools) : [];
  const offered = sampling.noTools ? [] : [...(request.clientTools ?? []), ...toolSpecsOf(descriptors)];
  const { context, droppedMessages } = await fitContext({
    engine, agentName: request.agent, modelName: agent.model, system, history, turn: turnMessages, tools: offered, ctxSize: model.ctx_size, maxTokens: sampling.maxTokens, signal: options.signal,
  });
  if (droppedMessages > 0 && request.truncation === "disabled") {
    throw new RuntimeError("context_overflow", `The conversation does not fit the context window (ctx_size ${model.ctx_size}): ${droppedMessages} of its oldest messages would have to be dropped, and truncation is disabled`, {
      details: { dropped_messages: droppedMessages, config_key: `llama.models.${agent.model}.ctx_size` },
    });
  }
  if (droppedMessages > 0) warnings.push(`trimmed the ${droppedMessages} oldest messages to fit the context window (ctx_size ${model.ctx_size})`);

  const turn: TurnState = { messages: turnMessages, step: 0, parseErrors: 0 };
  const outcome = await runAgentLoop({
    engine,
    tools,
    descriptors,
    toolPatterns: agent.tools,
    context,
    turn,
    ...sampling,
    ...(request.cacheKey === undefined ? {} : { stepOptions: { ...sampling.stepOptions, cacheKey: request.cacheKey } }),
    ...loopLimits(config),
    ...(request.clientTools === undefined ? {} : { clientTools: request.clientTools }),
    approveExecution: request.approve_execution === true,
    ...(request.resumeDecision === undefined ? {} : { resumeDecision: request.resumeDecision }),
    agentName: request.agent,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    signal: options.signal,
    emit,
    saveCheckpoint: async () => undefined,
  });
  log.info({ steps: turn.step, outcome: outcome.kind }, "stateless turn finished");
  const base = {
    response: outcome.kind === "paused" ? "" : outcome.response,
    reasoning: tally.reasoning,
    usage: tally.usage,
    session_id: null,
    trace_id: traceId,
    turn_messages: turn.messages.slice(turnStart),
  };
  switch (outcome.kind) {
    case "final":
      return { ...base, finish_reason: outcome.finishReason, ...(outcome.stopSequence === undefined ? {} : { stop_sequence: outcome.stopSequence }), warnings };
    case "client_tool_calls":
      return { ...base, finish_reason: "tool_calls", tool_calls: outcome.calls, warnings };
    case "aborted":
      return { ...base, finish_reason: "aborted", abort_reason: outcome.reason, warnings: [...warnings, `loop_abort: ${outcome.reason}`] };
    case "paused":
      if (request.pausable === true) return { ...base, finish_reason: "paused", pending_approval: { tool: outcome.pending.call.name, args: outcome.pending.args }, warnings };
      // Nothing is stored, so there is no turn to resume later: the gated tool is not run.
      return {
        ...base,
        finish_reason: "paused",
        pending_approval: { tool: outcome.pending.call.name, args: outcome.pending.args },
        warnings: [...warnings, `approval_required: ${outcome.pending.call.name} was not run (a conversation kept by the client cannot pause; send approve_execution: true, or name a session_id to pause and resume)`],
      };
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown loop outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The agent's system prompt first, the client's system messages after it (they add to it, never
 * replace it); then the conversation before the last user message as history, and from it on as
 * this turn (a tool round trip continues the turn the client's tool calls began).
 */
export function splitConversation(systemPrompt: string, messages: readonly ChatMessage[], resuming = false): { system: ChatMessage; history: ChatMessage[]; turn: ChatMessage[] } {
  const clientSystem = messages.flatMap((m) => (m.role === "system" && m.content.trim() !== "" ? [m.content] : []));
  const system: ChatMessage = { role: "system", content: [systemPrompt, ...clientSystem].join("\n\n") };
  const rest = messages.filter((m) => m.role !== "system");
  const last = rest.findLastIndex((m) => m.role === "user");
  if (last === -1) throw new RuntimeError("invalid_params", "messages must contain a user message", { details: { param: "messages" } });
  const turn = rest.slice(last);
  const tail = turn.at(-1);
  if (!resuming && tail?.role === "assistant" && (tail.tool_calls ?? []).length > 0) {
    throw new RuntimeError("invalid_params", "the last assistant message has tool_calls without tool results: send a tool message for each call", { details: { param: "messages" } });
  }
  return { system, history: rest.slice(0, last), turn };
}
