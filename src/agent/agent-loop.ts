import type { ChatMessage, ToolCall } from "../shared/conversation/chat-message.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { Engine } from "../engine/engine.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { MetricsRecorder } from "../shared/metrics-recorder.js";
import type { PendingToolCall } from "../store/store-types.js";
import type { ElicitationAnswer, ToolDescriptor, ToolProvider } from "../tools/tool-types.js";
import type { ParkedCall } from "./elicitation-park.js";
import type { ApprovalCallback, ElicitationCallback, EmitEvent, FinalFinishReason, LoopAbortReason } from "./events.js";
import { runModelStep, type StepOptions } from "./model-step.js";
import { renderForModel } from "./prompt.js";
import { ToolListWatch } from "./tool-list-watch.js";
import { settleToolCalls } from "./tool-step.js";
import { unansweredCalls, type TurnState } from "./turn-state.js";

export interface AgentLoopInput {
  engine: Engine;
  tools: ToolProvider;
  descriptors: readonly ToolDescriptor[];
  /**
   * The agent's `tools` patterns: with them, the list is taken again before each model step when
   * a server announced a change (`tools_changed`); without, `descriptors` stays the turn's list.
   */
  toolPatterns?: readonly string[];
  /** System prompt, memory and prior history: everything before this turn. */
  context: ChatMessage[];
  /** This turn; mutated as the loop runs and saved after each step and each tool call. */
  turn: TurnState;
  temperature: number;
  maxTokens: number;
  seed: number | null;
  /** Per-request engine controls (OpenAI sampling fields, response_format, tool_choice). */
  stepOptions?: StepOptions;
  /**
   * Tools the caller defines and runs itself (OpenAI function calling): the model is offered
   * these (and `descriptors`, when any: tools that run here), and a step that calls them ends the
   * loop with those calls, once the step's calls of `descriptors` have run.
   */
  clientTools?: ToolSpec[];
  /** tool_choice "none": the model is offered no tools at all. */
  noTools?: boolean;
  maxSteps: number;
  maxParseErrors: number;
  maxToolOutputBytes: number;
  approveExecution: boolean;
  /** Resuming a paused turn: what to do with the call that waited for approval. */
  resumeDecision?: "approve" | "decline";
  /** Ask the user mid-turn instead of pausing (front doors that can ask). */
  askApproval?: ApprovalCallback | undefined;
  /** Server questions: asked mid-turn, or (park) the turn pauses on them; see ToolStepInput. */
  askElicitation?: ElicitationCallback | undefined;
  parkElicitation?: ((parked: ParkedCall) => void) | undefined;
  resumeElicitation?: { answer: ElicitationAnswer; parked: ParkedCall | undefined } | undefined;
  /** The agent running the loop and where its tool calls are reported (docs/operations.md). */
  agentName?: string;
  metrics?: MetricsRecorder;
  signal: AbortSignal;
  emit: EmitEvent;
  saveCheckpoint: (status: "running" | "paused", pending: PendingToolCall | null) => Promise<void>;
}

export type LoopOutcome =
  | { kind: "final"; response: string; step: number; finishReason: FinalFinishReason; stopSequence?: string }
  | { kind: "client_tool_calls"; response: string; calls: ToolCall[]; step: number }
  | { kind: "aborted"; reason: LoopAbortReason; response: string; step: number }
  | { kind: "paused"; pending: PendingToolCall; step: number };

/**
 * ReAct: model step -> tool calls -> observations -> next step, until the model answers without
 * calling a tool, a limit is hit, or a tool needs approval. No I/O of its own: the engine, the
 * tools, the checkpoint writer and the event sink are injected.
 */
export async function runAgentLoop(input: AgentLoopInput): Promise<LoopOutcome> {
  const { turn, emit } = input;
  // The caller's own tools, or none at all, are fixed for the turn; the agent's may change.
  const fixed = input.noTools === true || input.clientTools !== undefined;
  const watch = new ToolListWatch(input.tools, fixed ? null : (input.toolPatterns ?? null), input.descriptors);
  const clientNames = new Set((input.clientTools ?? []).map((tool) => tool.name));
  const specsNow = (): ToolSpec[] => {
    if (input.noTools === true) return [];
    const agentSpecs = watch.specs();
    return input.clientTools === undefined ? agentSpecs : [...input.clientTools, ...agentSpecs.filter((spec) => !clientNames.has(spec.name))];
  };
  // With client tools, a call runs here only when it names one of the descriptors (the rest go back to the caller).
  const runsHere = (call: ToolCall): boolean => input.clientTools === undefined || (watch.current.has(call.name) && !clientNames.has(call.name));
  const save = (): Promise<void> => input.saveCheckpoint("running", null);
  let lastText = "";

  const settle = async (step: number, calls: ReturnType<typeof unansweredCalls>, resumeDecision?: "approve" | "decline", resumeElicitation?: AgentLoopInput["resumeElicitation"]): Promise<LoopOutcome | null> => {
    const pending = await settleToolCalls({
      tools: input.tools,
      descriptors: watch.current,
      turn,
      step,
      calls,
      approveExecution: input.approveExecution,
      ...(resumeDecision ? { resumeDecision } : {}),
      maxToolOutputBytes: input.maxToolOutputBytes,
      signal: input.signal,
      emit,
      save,
      askApproval: input.askApproval,
      askElicitation: input.askElicitation,
      parkElicitation: input.parkElicitation,
      resumeElicitation,
      ...(input.metrics ? { metrics: input.metrics, agentName: input.agentName ?? "none" } : {}),
    });
    if (pending) {
      await input.saveCheckpoint("paused", pending);
      return { kind: "paused", pending, step };
    }
    if (turn.parseErrors > input.maxParseErrors) {
      emit({ event: "loop_abort", step, reason: "parse_errors" });
      return { kind: "aborted", reason: "parse_errors", response: lastText, step };
    }
    return null;
  };

  // A resumed turn first settles the calls its last step left unanswered (completed ones are skipped).
  const leftover = unansweredCalls(turn.messages);
  if (leftover.length > 0) {
    const here = leftover.filter(runsHere);
    const outcome = here.length === 0 ? null : await settle(Math.max(0, turn.step - 1), here, input.resumeDecision, input.resumeElicitation);
    if (outcome) return outcome;
    const theirs = leftover.filter((call) => !runsHere(call));
    if (theirs.length > 0) return { kind: "client_tool_calls", response: "", calls: theirs, step: Math.max(0, turn.step - 1) };
    await save();
  }

  while (turn.step < input.maxSteps) {
    const step = turn.step;
    if (input.signal.aborted) throw new RuntimeError("cancelled", "Request cancelled");
    await watch.beforeStep(step, input.signal, emit);
    emit({ event: "llm_start", step });
    const output = await runModelStep({
      engine: input.engine,
      messages: renderForModel([...input.context, ...turn.messages], { images: input.engine.capabilities.images }),
      tools: specsNow(),
      temperature: input.temperature,
      maxTokens: input.maxTokens,
      seed: input.seed,
      ...(input.stepOptions === undefined ? {} : { options: input.stepOptions }),
      step,
      signal: input.signal,
      emit,
    });
    emit({ event: "llm_done", step });
    lastText = output.text;
    if (output.calls.length === 0) {
      turn.messages.push({ role: "assistant", content: output.text });
      turn.step = step + 1;
      const finish = output.finishReason === "length" || output.finishReason === "content_filter" ? output.finishReason : "stop";
      emit({ event: "final", step, response: output.text, finish_reason: finish });
      return { kind: "final", response: output.text, step, finishReason: finish, ...(finish === "stop" && output.stopSequence !== undefined ? { stopSequence: output.stopSequence } : {}) };
    }
    const calls = output.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
    turn.messages.push({ role: "assistant", content: output.text, tool_calls: calls });
    turn.step = step + 1;
    // The caller's own tools: it runs them and sends the results in its next request (after the
    // step's calls of tools that run here, which the caller cannot run).
    const theirs = calls.filter((call) => !runsHere(call));
    const here = output.calls.filter(runsHere);
    if (here.length === 0) {
      emit({ event: "final", step, response: output.text });
      return { kind: "client_tool_calls", response: output.text, calls: theirs, step };
    }
    // Saved before any tool runs: a crash now resumes with these calls, not a new model step.
    await save();
    const outcome = await settle(step, here);
    if (outcome) return outcome;
    if (theirs.length > 0) {
      emit({ event: "final", step, response: output.text });
      return { kind: "client_tool_calls", response: output.text, calls: theirs, step };
    }
  }
  const step = Math.max(0, turn.step - 1);
  emit({ event: "loop_abort", step, reason: "max_steps" });
  return { kind: "aborted", reason: "max_steps", response: lastText, step };
}
