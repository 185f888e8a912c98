import type { ToolCall } from "../shared/conversation/chat-message.js";
import type { MetricsRecorder } from "../shared/metrics-recorder.js";
import type { ImagePart } from "../shared/conversation/chat-message.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { needsApproval } from "../tools/approval-policy.js";
import type { ElicitationAnswer, ToolCallResult, ToolDescriptor, ToolProgress, ToolProvider } from "../tools/tool-types.js";
import { errorResult } from "../tools/tool-results.js";
import type { PendingToolCall } from "../store/store-types.js";
import type { ApprovalCallback, ElicitationCallback, EmitEvent } from "./events.js";
import type { ParkedCall } from "./elicitation-park.js";
import { runElicitedCall } from "./elicited-call.js";
import { checkToolArguments } from "./tool-arguments.js";
import { capToolOutput, previewOf, type TurnState } from "./turn-state.js";

export interface ToolStepInput {
  tools: ToolProvider;
  descriptors: ReadonlyMap<string, ToolDescriptor>;
  turn: TurnState;
  /** The step whose calls these are (for events). */
  step: number;
  calls: Array<ToolCall & { error?: string }>;
  approveExecution: boolean;
  /** For the first call only, when resuming a paused turn: run it, or tell the model it was declined. */
  resumeDecision?: "approve" | "decline";
  maxToolOutputBytes: number;
  signal: AbortSignal;
  emit: EmitEvent;
  /** Persists the turn after each completed call, so a crash never re-runs a completed tool. */
  save: () => Promise<void>;
  /** A front door that can ask the user mid-turn (terminal chat, an editor); without it the turn pauses. */
  askApproval?: ApprovalCallback | undefined;
  /** A front door that can ask its user a server's question mid-call. */
  askElicitation?: ElicitationCallback | undefined;
  /** Pause mode (stdio, JSON-RPC): a server's question parks the running call here and pauses the turn. */
  parkElicitation?: ((parked: ParkedCall) => void) | undefined;
  /** Resuming a turn paused on a question: the answer, and the call still running (none after a restart). */
  resumeElicitation?: { answer: ElicitationAnswer; parked: ParkedCall | undefined } | undefined;
  /** Where each settled call is counted, under this agent's name. */
  metrics?: MetricsRecorder;
  agentName?: string;
}

/** Runs the calls in order; returns the call that needs approval, if the turn must pause there. */
export async function settleToolCalls(input: ToolStepInput): Promise<PendingToolCall | null> {
  const { turn, step } = input;
  for (const [index, call] of input.calls.entries()) {
    // Each call's tool_done is counted; a name the model made up is never a label (bounded values).
    const descriptorOf = input.descriptors.get(call.name);
    const emit: EmitEvent = (event) => {
      if (event.event === "tool_done") input.metrics?.toolCall({ agent: input.agentName ?? "none", server: descriptorOf?.server ?? "none", tool: descriptorOf === undefined ? "unknown" : call.name, outcome: event.status });
      input.emit(event);
    };
    // `is_error` only on failures, so a stored successful result is byte-identical to before.
    const answer = (content: string, isError = true, images: ImagePart[] = []): void => {
      turn.messages.push({
        role: "tool",
        tool_call_id: call.id,
        name: call.name,
        content: capToolOutput(content, input.maxToolOutputBytes),
        ...(isError ? { is_error: true } : {}),
        ...(images.length === 0 ? {} : { images }),
      });
    };
    const descriptor = input.descriptors.get(call.name);
    const checked = call.error !== undefined
      ? ({ ok: false, problem: call.error } as const)
      : descriptor === undefined
        ? ({ ok: false, problem: [`there is no tool named "${call.name}"; available: ${[...input.descriptors.keys()].join(", ") || "none"}`, ...(input.tools.missingToolNotes?.() ?? [])].join("; ") } as const)
        : checkToolArguments(descriptor, call.arguments);
    if (!checked.ok || descriptor === undefined) {
      // Salvageable: the model is told what was wrong and gets another step.
      const problem = checked.ok ? "unknown tool" : checked.problem;
      turn.parseErrors++;
      const told = `Error: invalid tool call: ${problem}. Correct the call and try again.`;
      emit({ event: "tool_done", step, tool: call.name, status: "error", preview: previewOf(`invalid tool call: ${problem}`), retryable: true, ms: 0, call_id: call.id, output: told });
      answer(told);
      await input.save();
      continue;
    }
    // A call that cannot run is refused before anyone is asked to approve it.
    const refusal = (await input.tools.refusal?.(call.name, checked.args)) ?? null;
    if (refusal !== null) {
      const told = `Error (error): ${refusal}`;
      emit({ event: "tool_done", step, tool: call.name, status: "error", preview: previewOf(refusal), retryable: false, ms: 0, call_id: call.id, output: capToolOutput(refusal, input.maxToolOutputBytes) });
      answer(told);
      await input.save();
      continue;
    }
    const resumed = index === 0 ? input.resumeElicitation : undefined;
    let decision = resumed === undefined ? (index === 0 ? input.resumeDecision : undefined) : "approve";
    if (decision !== "approve" && decision !== "decline" && input.askApproval !== undefined && needsApproval(descriptor, input.approveExecution)) {
      const answered = input.metrics?.approvalWaiting();
      try {
        decision = await input.askApproval({ tool: call.name, args: checked.args, server: descriptor.server, step, call_id: call.id }, input.signal);
      } finally {
        answered?.();
      }
      if (input.signal.aborted) throw new RuntimeError("cancelled", "Request cancelled");
    }
    if (decision === "decline") {
      emit({ event: "tool_done", step, tool: call.name, status: "denied", preview: "declined by the user", retryable: false, ms: 0, call_id: call.id, output: "declined by the user" });
      answer(`The user declined to run ${call.name}. Do not call it again for this request; answer without it.`);
      await input.save();
      continue;
    }
    if (decision !== "approve" && needsApproval(descriptor, input.approveExecution)) {
      emit({ event: "tool_done", step, tool: call.name, status: "approval_required", preview: previewOf(`${call.name} needs approval: resume with approve_execution`), retryable: false, ms: 0, call_id: call.id });
      return { call, args: checked.args, server: descriptor.server };
    }
    // A call resumed after its server's question started in the paused turn: no second tool_start.
    if (resumed === undefined) emit({ event: "tool_start", step, tool: call.name, args: checked.args, call_id: call.id });
    const started = Date.now();
    const onProgress = (progress: ToolProgress): void => emit({ event: "tool_progress", step, tool: call.name, ...progress, call_id: call.id });
    let result: ToolCallResult;
    if (resumed !== undefined) {
      const parked = resumed.parked?.callId === call.id ? resumed.parked : undefined;
      parked?.answer(resumed.answer);
      result = parked === undefined ? errorResult("the call was interrupted while its server waited for the user's answer (local-ai restarted); it may or may not have completed", false) : await parked.result;
    } else {
      const run = await runElicitedCall({
        tools: input.tools, name: call.name, args: checked.args, callId: call.id, step, signal: input.signal, emit, onProgress,
        askElicitation: input.askElicitation, pause: input.parkElicitation !== undefined,
      });
      if (run.kind === "asked") {
        input.parkElicitation?.(run.parked);
        return { call, args: checked.args, server: descriptor.server, elicitation: run.request };
      }
      result = run.result;
    }
    const ms = Date.now() - started;
    const output = capToolOutput(result.content, input.maxToolOutputBytes);
    emit({ event: "tool_done", step, tool: call.name, status: result.status, preview: previewOf(result.content), retryable: result.retryable, ms, call_id: call.id, output });
    if (result.status === "cancelled" || input.signal.aborted) {
      throw new RuntimeError("cancelled", "Request cancelled");
    }
    const images = (result.images ?? []).map((image): ImagePart => ({ type: "image_url", image_url: { url: `data:${image.mimeType};base64,${image.data}` } }));
    answer(result.status === "ok" ? result.content : `Error (${result.status}): ${result.content}`, result.status !== "ok", images);
    await input.save();
  }
  return null;
}
