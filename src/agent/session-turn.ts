import { randomBytes } from "node:crypto";
import type { AgentConfig } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { Logger } from "pino";
import { RuntimeError } from "../shared/runtime-error.js";
import type { Checkpoint } from "../store/store-types.js";
import { scopeTools } from "../tools/scoped-tool-provider.js";
import { CheckpointWriter } from "./checkpoint-writer.js";
import type { ElicitationPark } from "./elicitation-park.js";
import { inputText } from "./prompt.js";
import type { LoopOutcome } from "./agent-loop.js";
import type { TurnPlan } from "./turn-core.js";
import type { SessionRunnerDeps, TurnOptions, TurnRequest } from "./turn-request.js";
import type { TurnState } from "./turn-state.js";

/** What a session turn needs of its SessionRunner beyond the deps. */
export interface SessionTurnHost {
  deps: SessionRunnerDeps;
  /** Calls still running while their turns wait on a server's question (pause mode). */
  park: ElicitationPark;
  resolveAgent(name: string | undefined, model?: string): [string, AgentConfig];
  /** The user's input as the turn's first messages (MCP prompts and resources expanded). */
  openingMessages(request: TurnRequest, agent: AgentConfig, options: TurnOptions): Promise<ChatMessage[]>;
}

export interface SessionTurnStart {
  userId: string;
  sessionId: string;
  request: TurnRequest;
  options: TurnOptions;
  memoryReady: Promise<void>;
}

/**
 * A session turn's plan but its engine (got after the first checkpoint is on its way, as the
 * caller handles a failure), and its checkpoint writer (flushed by the caller when the turn fails).
 */
export interface SessionTurnPlan {
  plan: Omit<TurnPlan, "engine">;
  writer: CheckpointWriter;
}

/** The turn as it opens: new, or resumed from its checkpoint. */
interface OpenedTurn {
  agentName: string;
  agent: AgentConfig;
  turn: TurnState;
  traceId: string;
  userInput: string;
  loop: TurnPlan["loop"];
  warnings: string[];
}

/**
 * Under the session lock: the turn new (its opening messages, a left-over checkpoint discarded)
 * or resumed from its checkpoint, its first checkpoint written, and the plan the turn core runs:
 * context from the store, a checkpoint after each step, the finished turn appended to the
 * history and memory (a paused one left in its checkpoint).
 */
export async function planSessionTurn(host: SessionTurnHost, start: SessionTurnStart): Promise<SessionTurnPlan> {
  const { deps } = host;
  const { userId, sessionId, request, options } = start;
  const opened = await openTurn(host, start);
  const { agentName, agent, turn, traceId, userInput } = opened;
  const log = (options.logger ?? deps.logger).child({ trace_id: traceId, session_id: sessionId, user_id: userId, agent: agentName });
  const writer = new CheckpointWriter((next) => deps.store.writeCheckpoint(userId, sessionId, next));
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
  const parkKey = `${userId}/${sessionId}`;
  const plan: SessionTurnPlan["plan"] = {
    agentName,
    agent,
    tools: scopeTools(options.tools ?? deps.tools, options.toolScope),
    turn,
    traceId,
    sessionId,
    userInput,
    warnings: opened.warnings,
    overrides: request.overrides,
    accepts: request.resume === true ? [] : turn.messages,
    context: { from: "session", store: deps.store, memory: deps.memory, userId, sessionId, memoryReady: start.memoryReady, resumed: request.resume === true },
    persist: { saveCheckpoint: save, pausedWarning: (tool) => `approval_required: ${tool}`, finish: (outcome) => finishSessionTurn(deps, start, opened, writer, log, outcome) },
    loop: {
      ...opened.loop,
      askApproval: options.askApproval,
      askElicitation: options.askElicitation,
      parkElicitation: options.pauseForElicitation === true ? (parked) => host.park.put(parkKey, parked) : undefined,
      cacheKey: parkKey,
    },
    log,
  };
  return { plan, writer };
}

/** A new turn (its opening messages; a left-over checkpoint discarded), or one resumed from its checkpoint. */
async function openTurn(host: SessionTurnHost, start: SessionTurnStart): Promise<OpenedTurn> {
  const { store } = host.deps;
  const { userId, sessionId, request, options } = start;
  const checkpoint = await store.readCheckpoint(userId, sessionId);
  const parkKey = `${userId}/${sessionId}`;
  if (request.resume === true) {
    if (checkpoint === null) throw new RuntimeError("invalid_request", `Nothing to resume in session ${sessionId}: it has no interrupted or paused turn`);
    const [agentName, agent] = host.resolveAgent(checkpoint.agent, request.model);
    const turn = { messages: checkpoint.messages, step: checkpoint.step, parseErrors: checkpoint.parse_errors };
    const loop = resumeChoices(checkpoint, request, () => host.park.take(parkKey));
    return { agentName, agent, turn, traceId: checkpoint.trace_id, userInput: checkpoint.user_input, loop, warnings: [] };
  }
  const warnings: string[] = [];
  if (checkpoint !== null) {
    warnings.push(`discarded the unfinished turn ${checkpoint.trace_id} of this session (send resume: true to continue such a turn)`);
    await store.clearCheckpoint(userId, sessionId);
  }
  if (host.park.drop(parkKey)) (options.logger ?? host.deps.logger).info({ session_id: sessionId }, "a new turn dropped the paused one: its server's question is declined");
  const [agentName, agent] = host.resolveAgent(request.agent, request.model);
  const messages = await host.openingMessages(request, agent, options);
  const first = messages[0];
  const userInput = first?.role === "user" ? inputText(first.content) : "";
  return { agentName, agent, turn: { messages, step: 0, parseErrors: 0 }, traceId: randomBytes(8).toString("hex"), userInput, loop: { approveExecution: request.approve_execution === true }, warnings };
}

/** After the loop: the checkpoints flushed; a finished turn appended to the history and memory, a paused one left in its checkpoint. */
async function finishSessionTurn(deps: SessionRunnerDeps, start: SessionTurnStart, opened: OpenedTurn, writer: CheckpointWriter, log: Logger, outcome: LoopOutcome): Promise<void> {
  await writer.flush();
  if (outcome.kind === "paused") {
    const { pending } = outcome;
    if (pending.elicitation !== undefined) log.info({ tool: pending.call.name, server: pending.elicitation.server }, "turn paused for the server's question");
    else log.info({ tool: pending.call.name }, "turn paused for approval");
    return;
  }
  const { userId, sessionId } = start;
  const { turn } = opened;
  const entry = { trace_id: opened.traceId, agent: opened.agentName, at: new Date().toISOString(), messages: turn.messages };
  await deps.store.appendTurn(userId, sessionId, entry);
  await deps.store.clearCheckpoint(userId, sessionId);
  if (opened.agent.memory) deps.memory.addTurn(userId, sessionId, entry);
  log.info({ steps: turn.step, outcome: outcome.kind }, "turn finished");
}

/**
 * A paused turn resumes with the user's decision on the call it was shown (approve_execution
 * answers that call and nothing else: a later flagged call of the turn pauses again), or, paused
 * on a server's question, with the answer (none: cancel). An interrupted turn simply goes on.
 */
function resumeChoices(checkpoint: Checkpoint, request: TurnRequest, takeParked: () => ReturnType<ElicitationPark["take"]>): TurnPlan["loop"] {
  if (checkpoint.status === "paused" && checkpoint.pending?.elicitation !== undefined) {
    return { approveExecution: request.approve_execution === true, resumeElicitation: { answer: request.elicitation ?? { action: "cancel" }, parked: takeParked() } };
  }
  if (checkpoint.status === "paused") return { approveExecution: false, resumeDecision: request.approve_execution === true ? "approve" : "decline" };
  return { approveExecution: request.approve_execution === true };
}
