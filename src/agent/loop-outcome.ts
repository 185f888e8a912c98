import type { LoopOutcome } from "./agent-loop.js";
import type { TurnOutcome } from "./turn-outcome.js";

/** What every outcome of a turn carries, whatever way its loop ended. */
export type TurnOutcomeBase = Pick<TurnOutcome, "reasoning" | "usage" | "session_id" | "trace_id" | "turn_messages">;

/**
 * The one mapping from how the AgentLoop ended to the TurnOutcome every front door reads.
 * `warnings`: the turn's so far (the loop's abort, or `pausedWarning`'s text, is added to a copy).
 * `pausedWarning`: what a turn paused for approval says (undefined: nothing, its front door
 * resumes it without a word).
 */
export function turnOutcomeOf(outcome: LoopOutcome, base: TurnOutcomeBase, warnings: readonly string[], pausedWarning: (tool: string) => string | undefined): TurnOutcome {
  const common = { ...base, warnings: [...warnings] };
  switch (outcome.kind) {
    case "final":
      return { ...common, finish_reason: outcome.finishReason, response: outcome.response, ...(outcome.stopSequence === undefined ? {} : { stop_sequence: outcome.stopSequence }) };
    case "client_tool_calls":
      return { ...common, finish_reason: "tool_calls", tool_calls: outcome.calls, response: outcome.response };
    case "aborted":
      common.warnings.push(`loop_abort: ${outcome.reason}`);
      return { ...common, finish_reason: "aborted", abort_reason: outcome.reason, response: outcome.response };
    case "paused": {
      const { pending } = outcome;
      if (pending.elicitation !== undefined) return { ...common, finish_reason: "paused", pending_elicitation: pending.elicitation, response: "" };
      const warning = pausedWarning(pending.call.name);
      if (warning !== undefined) common.warnings.push(warning);
      return { ...common, finish_reason: "paused", pending_approval: { tool: pending.call.name, args: pending.args }, response: "" };
    }
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown loop outcome ${JSON.stringify(unreachable)}`);
    }
  }
}
