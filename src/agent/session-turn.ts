import type { Logger } from "pino";
import type { AgentConfig } from "../config/schema.js";
import type { Checkpoint } from "../store/store-types.js";
import type { ElicitationAnswer } from "../tools/tool-types.js";
import type { ParkedCall } from "./elicitation-park.js";
import { runAgentLoop, type LoopOutcome } from "./agent-loop.js";
import type { CheckpointWriter } from "./checkpoint-writer.js";
import { fitContext } from "./context-budget.js";
import { memoryNotesFor } from "./memory-notes.js";
import { renderForModel } from "./prompt.js";
import type { SessionRunnerDeps, TurnOptions, TurnRequest } from "./turn-request.js";
import { TurnTally, type SessionTurnOutcome } from "./turn-outcome.js";
import type { TurnState } from "./turn-state.js";
import { assertEngineAccepts, loopLimits, resolveSampling, samplingWarnings, toolSpecsOf } from "./turn-settings.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { scopeTools } from "../tools/scoped-tool-provider.js";

/** A turn as SessionRunner.runTurn set it up under the session lock: new, or resumed from its checkpoint. */
export interface SessionTurn {
  userId: string;
  sessionId: string;
  request: TurnRequest;
  options: TurnOptions;
  warnings: string[];
  turn: TurnState;
  traceId: string;
  agentName: string;
  agent: AgentConfig;
  userInput: string;
  resumeDecision: "approve" | "decline" | undefined;
  resumeElicitation: { answer: ElicitationAnswer; parked: ParkedCall | undefined } | undefined;
  parkElicitation: ((parked: ParkedCall) => void) | undefined;
  save: (status: Checkpoint["status"], pending: Checkpoint["pending"]) => Promise<void>;
  log: Logger;
  writer: CheckpointWriter;
  memoryReady: Promise<void>;
}

/**
 * The body of one locked turn: the engine and tools started, history and memory loaded, the
 * context fitted to the window, the AgentLoop run with a checkpoint after each step, and the
 * finished turn appended to the history (or the paused one left in its checkpoint).
 */
export async function runSessionTurn(deps: SessionRunnerDeps, ctx: SessionTurn): Promise<SessionTurnOutcome> {
  const { userId, sessionId, request, options, warnings, turn, traceId, agentName, agent, userInput, resumeDecision, resumeElicitation, parkElicitation, save, log, writer, memoryReady } = ctx;
  const tally = new TurnTally();
  const emit = tally.wrap(options.emit);
  const { store, memory, config } = deps;
  const model = config.llama.models[agent.model];
  if (model === undefined) throw new RuntimeError("config_invalid", `agents.${agentName}.model names an unknown model "${agent.model}"`);
  const engine = await deps.engineFor(agent.model);
  const tools = scopeTools(options.tools ?? deps.tools, options.toolScope);
  if (request.resume !== true) assertEngineAccepts(engine, turn.messages);
  const sampling = resolveSampling(agent, request.overrides);
  warnings.push(...samplingWarnings(engine, request.overrides));

  emit({ event: "run_start", user_input: userInput, trace_id: traceId, session_id: sessionId, agent: agentName });
  const [history] = await Promise.all([
    store.loadHistory(userId, sessionId),
    engine.warmUp({ signal: options.signal, onModelLoad: (load) => emit({ event: "model_load", step: 0, ...load }), logger: log }),
    tools.start(options.signal),
    memoryReady,
  ]);
  warnings.push(...history.warnings);
  // A resumed turn keeps the notes it started with (they are on its user message).
  const notes = request.resume === true
    ? { preamble: undefined, snippets: 0 }
    : await memoryNotesFor({ memory, engine, agent, userId, sessionId, query: userInput, history: history.messages, signal: options.signal });
  emit({ event: "memory_start", snippets: notes.snippets });
  const { preamble } = notes;
  const first = turn.messages[0];
  if (preamble !== undefined && first?.role === "user") turn.messages[0] = { ...first, preamble };
  const descriptors = tools.list(agent.tools);
  const { context, droppedMessages } = await fitContext({
    engine,
    agentName,
    modelName: agent.model,
    system: { role: "system", content: agent.system_prompt },
    history: renderForModel(history.messages, { images: engine.capabilities.images }),
    turn: renderForModel(turn.messages, { images: engine.capabilities.images }),
    tools: sampling.noTools ? [] : toolSpecsOf(descriptors),
    ctxSize: model.ctx_size,
    maxTokens: sampling.maxTokens,
    signal: options.signal,
  });
  if (droppedMessages > 0) warnings.push(`trimmed the ${droppedMessages} oldest history messages to fit the context window (ctx_size ${model.ctx_size})`);

  const outcome: LoopOutcome = await runAgentLoop({
    engine,
    tools,
    descriptors,
    toolPatterns: agent.tools,
    context,
    turn,
    ...sampling,
    stepOptions: { ...sampling.stepOptions, cacheKey: `${userId}/${sessionId}` },
    ...loopLimits(config),
    // Resuming a paused turn, approve_execution answers the call the user was shown and nothing
    // else: a later flagged call of the same turn pauses again instead of riding on that answer.
    approveExecution: request.approve_execution === true && resumeDecision === undefined,
    ...(resumeDecision ? { resumeDecision } : {}),
    askApproval: options.askApproval,
    askElicitation: options.askElicitation,
    parkElicitation,
    resumeElicitation,
    agentName,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    signal: options.signal,
    emit,
    saveCheckpoint: save,
  });

  await writer.flush();
  const base = { reasoning: tally.reasoning, usage: tally.usage, session_id: sessionId, trace_id: traceId, warnings };
  if (outcome.kind === "paused" && outcome.pending.elicitation !== undefined) {
    log.info({ tool: outcome.pending.call.name, server: outcome.pending.elicitation.server }, "turn paused for the server's question");
    return { ...base, finish_reason: "paused", pending_elicitation: outcome.pending.elicitation, response: "" };
  }
  if (outcome.kind === "paused") {
    warnings.push(`approval_required: ${outcome.pending.call.name}`);
    log.info({ tool: outcome.pending.call.name }, "turn paused for approval");
    return { ...base, finish_reason: "paused", pending_approval: { tool: outcome.pending.call.name, args: outcome.pending.args }, response: "" };
  }
  const entry = { trace_id: traceId, agent: agentName, at: new Date().toISOString(), messages: turn.messages };
  await store.appendTurn(userId, sessionId, entry);
  await store.clearCheckpoint(userId, sessionId);
  if (agent.memory) memory.addTurn(userId, sessionId, entry);
  log.info({ steps: turn.step, outcome: outcome.kind }, "turn finished");
  switch (outcome.kind) {
    case "final":
      return { ...base, finish_reason: outcome.finishReason, response: outcome.response };
    case "aborted":
      warnings.push(`loop_abort: ${outcome.reason}`);
      return { ...base, finish_reason: "aborted", abort_reason: outcome.reason, response: outcome.response };
    case "client_tool_calls":
      // Session turns offer no client tools; kept total for the type.
      return { ...base, finish_reason: "tool_calls", tool_calls: outcome.calls, response: outcome.response };
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown loop outcome ${JSON.stringify(unreachable)}`);
    }
  }
}
