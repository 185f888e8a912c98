import type { ElicitationAnswer, ElicitationRequest, ToolCallOptions, ToolCallResult, ToolProvider } from "../tools/tool-types.js";
import type { ParkedCall } from "./elicitation-park.js";
import type { ElicitationCallback, EmitEvent } from "./events.js";

export interface ElicitedCallInput {
  tools: ToolProvider;
  name: string;
  args: Record<string, unknown>;
  callId: string;
  step: number;
  signal: AbortSignal;
  emit: EmitEvent;
  onProgress: NonNullable<ToolCallOptions["onProgress"]>;
  askElicitation?: ElicitationCallback | undefined;
  /** The front door answers in a later request: a question ends the wait here with `asked`. */
  pause: boolean;
}

export type ElicitedCallOutcome = { kind: "done"; result: ToolCallResult } | { kind: "asked"; request: ElicitationRequest; parked: ParkedCall };

/**
 * Runs one tool call whose server may ask the user a question. With askElicitation the question
 * is asked mid-call; in pause mode the first question returns `asked` while the call keeps
 * running (its result and the answer hook are the ParkedCall); otherwise the server is declined.
 */
export async function runElicitedCall(input: ElicitedCallInput): Promise<ElicitedCallOutcome> {
  const { step, callId, emit } = input;
  let onAsked: ((asked: { request: ElicitationRequest; answer: (answer: ElicitationAnswer) => void }) => void) | undefined;
  const asked = new Promise<{ request: ElicitationRequest; answer: (answer: ElicitationAnswer) => void }>((resolve) => (onAsked = resolve));
  let questions = 0;
  const elicit = async (request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationAnswer> => {
    questions++;
    const ask = input.askElicitation;
    if (ask !== undefined) {
      emit({ event: "elicitation_request", step, server: request.server, message: request.message, requested_schema: request.requested_schema, call_id: callId });
      // The turn's cancel (Ctrl-C at the question) withdraws it as well as the server's own end.
      return ask({ ...request, step, call_id: callId }, AbortSignal.any([signal, input.signal]));
    }
    // One pause per call: a second question while the turn is already paused cannot be shown.
    if (!input.pause || questions > 1) return { action: "decline" };
    emit({ event: "elicitation_request", step, server: request.server, message: request.message, requested_schema: request.requested_schema, call_id: callId });
    return new Promise<ElicitationAnswer>((resolve) => {
      signal.addEventListener("abort", () => resolve({ action: "decline" }), { once: true });
      onAsked?.({ request, answer: resolve });
    });
  };
  let paused = false;
  // Once the turn paused, its request has been answered: the call's later progress has nowhere to go.
  const onProgress: typeof input.onProgress = (progress) => {
    if (!paused) input.onProgress(progress);
  };
  const result = input.tools.call(input.name, input.args, { signal: input.signal, onProgress, elicit });
  const first = await Promise.race([result.then((done) => ({ kind: "done" as const, done })), asked.then((question) => ({ kind: "asked" as const, question }))]);
  if (first.kind === "done") return { kind: "done", result: first.done };
  paused = true;
  // The result is awaited by the resumed turn; until then a rejection must not go unhandled.
  result.catch(() => undefined);
  return { kind: "asked", request: first.question.request, parked: { callId, result, answer: first.question.answer } };
}
