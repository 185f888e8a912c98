import type { Logger } from "pino";
import type { AgentConfig, Config } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { SamplingOverrides } from "../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { Engine } from "../engine/engine.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { MetricsRecorder } from "../shared/metrics-recorder.js";
import type { MemoryIndex, SessionStore } from "../store/store-types.js";
import type { ToolProvider } from "../tools/tool-types.js";
import { runAgentLoop, type AgentLoopInput, type LoopOutcome } from "./agent-loop.js";
import { fitContext } from "./context-budget.js";
import type { EmitEvent } from "./events.js";
import { turnOutcomeOf } from "./loop-outcome.js";
import { memoryNotesFor } from "./memory-notes.js";
import { renderForModel } from "./prompt.js";
import type { TurnMeter, TurnMeterLabels } from "./turn-meter.js";
import { TurnTally, type TurnOutcome } from "./turn-outcome.js";
import type { TurnState } from "./turn-state.js";
import { assertEngineAccepts, loopLimits, resolveSampling, samplingWarnings, toolSpecsOf } from "./turn-settings.js";

/** The context comes from the session store: its history, and memory notes for a new turn. */
export interface SessionSource {
  from: "session";
  store: SessionStore;
  memory: MemoryIndex;
  userId: string;
  sessionId: string;
  /** The user's memory index, built while the session lock was taken. */
  memoryReady: Promise<void>;
  /** A resumed turn keeps the notes it started with (they are on its user message). */
  resumed: boolean;
}

/** The context comes from the request: the client keeps the conversation and resends it. */
export interface RequestSource {
  from: "request";
  /** The agent's system prompt with the client's system text. */
  system: ChatMessage;
  history: ChatMessage[];
  /** "disabled": a conversation that does not fit is a `context_overflow` instead of trimmed. */
  truncation?: "auto" | "disabled" | undefined;
}

/**
 * What the turn keeps: a session writes a checkpoint after each step and, at the end, the
 * history and memory; a request's turn keeps nothing. `finish` also logs how the turn ended.
 */
export interface TurnPersistence {
  saveCheckpoint: AgentLoopInput["saveCheckpoint"];
  finish(outcome: LoopOutcome): Promise<void>;
  /** What a turn paused for approval says (undefined: nothing, its front door resumes it). */
  pausedWarning(tool: string): string | undefined;
}

/** One turn, planned by its front door's kind (session or request) and run by `runTurn`. */
export interface TurnPlan {
  /** The agent as resolved once for this turn (on the request's model where it named one). */
  agentName: string;
  agent: AgentConfig;
  engine: Engine;
  /** The agent's tools as this caller may run them; started with the engine. */
  tools: ToolProvider;
  /** Tools of the request offered instead of the agent's (Responses `mcp`); the caller starts them. */
  requestTools?: ToolProvider | undefined;
  /** The client's own functions (run by the client), offered before the agent's. */
  clientTools?: ToolSpec[] | undefined;
  /** This turn; mutated as the loop runs. */
  turn: TurnState;
  traceId: string;
  sessionId: string | null;
  userInput: string;
  /** What the front door already has to say (a discarded turn); the turn adds its own. */
  warnings: string[];
  overrides?: SamplingOverrides | undefined;
  /** Checked for parts the engine cannot take (none for a resumed turn: checked when it began). */
  accepts: readonly ChatMessage[];
  context: SessionSource | RequestSource;
  persist: TurnPersistence;
  /** The loop's choices: approval and how a paused turn resumes, and the KV cache key. */
  loop: Pick<AgentLoopInput, "approveExecution" | "resumeDecision" | "askApproval" | "askElicitation" | "parkElicitation" | "resumeElicitation"> & { cacheKey?: string | undefined };
  log: Logger;
}

export interface TurnCoreDeps {
  config: Config;
  metrics?: MetricsRecorder | undefined;
  meter: TurnMeter;
}

/**
 * The body of every turn: the model checked, the engine and tools started, the context gathered
 * (from the session or the request) and fitted to the window, the AgentLoop run, the turn kept
 * as its plan says, and its usage handed to the meter however it ended.
 */
export async function runTurn(deps: TurnCoreDeps, plan: TurnPlan, io: { signal: AbortSignal; emit: EmitEvent; meter?: TurnMeterLabels | false | undefined }): Promise<TurnOutcome> {
  const tally = new TurnTally();
  try {
    return await runCounted(deps, plan, io.signal, tally.wrap(io.emit), tally);
  } finally {
    if (tally.reported && io.meter !== false) deps.meter.turnEnded({ agent: plan.agentName, model: plan.agent.model }, io.meter, tally.usage);
  }
}

async function runCounted(deps: TurnCoreDeps, plan: TurnPlan, signal: AbortSignal, emit: EmitEvent, tally: TurnTally): Promise<TurnOutcome> {
  const { agentName, agent, engine, tools, turn, log, context: source } = plan;
  const model = deps.config.llama.models[agent.model];
  if (model === undefined) throw new RuntimeError("config_invalid", `agents.${agentName}.model names an unknown model "${agent.model}"`);
  assertEngineAccepts(engine, plan.accepts);
  const sampling = resolveSampling(agent, plan.overrides);
  const warnings = [...plan.warnings, ...samplingWarnings(engine, plan.overrides)];

  emit({ event: "run_start", user_input: plan.userInput, trace_id: plan.traceId, session_id: plan.sessionId, agent: agentName });
  const [history] = await Promise.all([
    source.from === "session" ? Promise.all([source.store.loadHistory(source.userId, source.sessionId), source.memoryReady]).then(([loaded]) => loaded) : { messages: source.history, warnings: [] },
    engine.warmUp({ signal, onModelLoad: (load) => emit({ event: "model_load", step: 0, ...load }), logger: log }),
    tools.start(signal),
  ]);
  warnings.push(...history.warnings);
  const notes = source.from === "session" && !source.resumed
    ? await memoryNotesFor({ memory: source.memory, engine, agent, userId: source.userId, sessionId: source.sessionId, query: plan.userInput, history: history.messages, signal })
    : { preamble: undefined, snippets: 0 };
  emit({ event: "memory_start", snippets: notes.snippets });
  const first = turn.messages[0];
  if (notes.preamble !== undefined && first?.role === "user") turn.messages[0] = { ...first, preamble: notes.preamble };

  const descriptors = plan.requestTools !== undefined ? plan.requestTools.list(["*"]) : plan.clientTools === undefined ? tools.list(agent.tools) : [];
  const images = { images: engine.capabilities.images };
  // A session's stored messages are rendered for this model; a client's are taken as sent.
  const { context, droppedMessages } = await fitContext({
    engine,
    agentName,
    modelName: agent.model,
    system: source.from === "session" ? { role: "system", content: agent.system_prompt } : source.system,
    history: source.from === "session" ? renderForModel(history.messages, images) : history.messages,
    turn: source.from === "session" ? renderForModel(turn.messages, images) : turn.messages,
    tools: sampling.noTools ? [] : [...(plan.clientTools ?? []), ...toolSpecsOf(descriptors)],
    ctxSize: model.ctx_size,
    maxTokens: sampling.maxTokens,
    signal,
  });
  if (droppedMessages > 0 && source.from === "request" && source.truncation === "disabled") {
    throw new RuntimeError("context_overflow", `The conversation does not fit the context window (ctx_size ${model.ctx_size}): ${droppedMessages} of its oldest messages would have to be dropped, and truncation is disabled`, {
      details: { dropped_messages: droppedMessages, config_key: `llama.models.${agent.model}.ctx_size` },
    });
  }
  if (droppedMessages > 0) warnings.push(`trimmed the ${droppedMessages} oldest ${source.from === "session" ? "history " : ""}messages to fit the context window (ctx_size ${model.ctx_size})`);

  const turnStart = turn.messages.length;
  const { cacheKey, ...choices } = plan.loop;
  const outcome = await runAgentLoop({
    engine,
    tools: plan.requestTools ?? tools,
    descriptors,
    toolPatterns: agent.tools,
    context,
    turn,
    ...sampling,
    ...(cacheKey === undefined ? {} : { stepOptions: { ...sampling.stepOptions, cacheKey } }),
    ...loopLimits(deps.config),
    ...(plan.clientTools === undefined ? {} : { clientTools: plan.clientTools }),
    ...choices,
    agentName,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    signal,
    emit,
    saveCheckpoint: plan.persist.saveCheckpoint,
  });
  await plan.persist.finish(outcome);
  const base = {
    reasoning: tally.reasoning,
    usage: tally.usage,
    session_id: plan.sessionId,
    trace_id: plan.traceId,
    // The client keeps the conversation: it gets what the turn added to it.
    ...(source.from === "request" ? { turn_messages: turn.messages.slice(turnStart) } : {}),
  };
  return turnOutcomeOf(outcome, base, warnings, (tool) => plan.persist.pausedWarning(tool));
}
