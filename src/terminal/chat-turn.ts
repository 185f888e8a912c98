import type { Logger } from "pino";
import type { SessionRunner } from "../agent/session-runner.js";
import type { TurnRequest } from "../agent/turn-request.js";
import { toRuntimeError } from "../shared/runtime-error.js";
import type { ChatApprovals } from "./chat-approvals.js";
import type { ChatElicitations } from "./chat-elicitations.js";
import type { LineWriter } from "./line-writer.js";
import type { TerminalStyle } from "./terminal-style.js";
import { TurnPrinter } from "./turn-printer.js";
import type { UsageTally } from "./usage-tally.js";

export interface ChatTurnDeps {
  runner: SessionRunner;
  approvals: ChatApprovals;
  elicitations: ChatElicitations;
  answers: LineWriter;
  ui: LineWriter;
  style: TerminalStyle;
  showThinking: boolean;
  showUsage: boolean;
  logger: Logger;
}

/**
 * loop_abort was said in words when its event came; the discarded unfinished turn is the one this
 * chat just cancelled, and the cancel line said a new message starts over.
 */
function alreadySaid(warning: string, cancelledHere: boolean): boolean {
  return warning.startsWith("loop_abort:") || (cancelledHere && warning.startsWith("discarded the unfinished turn"));
}

export type ChatTurnOutcome = { kind: "finished"; usage: UsageTally } | { kind: "cancelled" } | { kind: "failed" };

/**
 * One turn of the terminal chat: streams its events through a TurnPrinter, asks approvals through
 * the chat's ChatApprovals, and says how it ended in one line (warnings, usage on request, the
 * cancel, the error with its code). `signal` is the turn's Ctrl-C.
 */
export async function runChatTurn(deps: ChatTurnDeps, request: TurnRequest, signal: AbortSignal, after: { cancelledHere: boolean }): Promise<ChatTurnOutcome> {
  const { ui, style } = deps;
  const printer = new TurnPrinter({ answers: deps.answers, ui, style, showThinking: deps.showThinking });
  try {
    const result = await deps.runner.runTurn(request, { signal, emit: (event) => printer.print(event), askApproval: deps.approvals.ask, askElicitation: deps.elicitations.ask });
    printer.finish();
    for (const warning of result.warnings.filter((text) => !alreadySaid(text, after.cancelledHere))) ui.line(style.yellow(`warning: ${warning}`));
    if (result.finish_reason === "length") ui.line(style.yellow("warning: the answer was cut at max_tokens"));
    if (deps.showUsage) ui.line(style.dim(`usage: ${printer.usage.describe()}`));
    return { kind: "finished", usage: printer.usage };
  } catch (thrown) {
    printer.finish();
    const error = toRuntimeError(thrown);
    if (signal.aborted || error.code === "cancelled") {
      ui.line(style.yellow("cancelled (/resume continues the turn; a new message starts over)"));
      return { kind: "cancelled" };
    }
    if (error.code === "internal_error") deps.logger.error({ err: thrown }, "chat turn failed");
    ui.line(style.red(`error (${error.code}): ${error.message}`));
    return { kind: "failed" };
  }
}
