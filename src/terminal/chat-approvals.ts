import type { ApprovalCallback, ApprovalRequest } from "../agent/events.js";
import type { ChatInput } from "./chat-input.js";
import type { LineWriter } from "./line-writer.js";
import type { TerminalStyle } from "./terminal-style.js";
import { oneLine } from "./tool-line.js";

export type ApprovalAnswer = "yes" | "no" | "always";

/** `y`/`yes`, `a`/`always`; anything else (Enter included) is the default, no. */
export function parseApprovalAnswer(answer: string): ApprovalAnswer {
  const word = answer.trim().toLowerCase();
  if (word === "y" || word === "yes") return "yes";
  if (word === "a" || word === "always") return "always";
  return "no";
}

/**
 * The terminal chat's answer to a gated tool: asks `Run <tool> <args>? [y/N/a(lways)]` mid-turn
 * and the turn goes on with the answer. "always" is remembered per tool until the chat moves to
 * another session (/new, /session). Without a terminal (piped stdin) nobody can be asked: the call
 * is declined with a line on the status stream saying why.
 */
export class ChatApprovals {
  private readonly always = new Set<string>();

  constructor(
    private readonly input: ChatInput,
    private readonly ui: LineWriter,
    private readonly style: TerminalStyle,
  ) {}

  /** Forgets every "always" (a new session starts with nothing approved). */
  forget(): void {
    this.always.clear();
  }

  readonly ask: ApprovalCallback = async (request: ApprovalRequest, signal: AbortSignal) => {
    if (this.always.has(request.tool)) return "approve";
    const { ui, style } = this;
    if (!this.input.interactive) {
      ui.line(style.yellow(`declined ${request.tool}: it needs approval, and with stdin not a terminal nobody can be asked (to allow it in scripts, take it out of ${request.server === "" ? "" : `mcp.servers.${request.server}.`}requires_approval)`));
      return "decline";
    }
    ui.endLine();
    const args = oneLine(request.args, Math.max(20, ui.width - request.tool.length - 30));
    const answer = await this.input.ask(`${style.yellow("Run")} ${style.bold(request.tool)} ${args}? ${style.dim("[y/N/a(lways)]")} `, signal);
    if (answer === null) return "decline";
    const parsed = parseApprovalAnswer(answer);
    if (parsed === "always") this.always.add(request.tool);
    return parsed === "no" ? "decline" : "approve";
  };
}
