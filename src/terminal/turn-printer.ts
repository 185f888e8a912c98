import type { AgentEvent } from "../agent/events.js";
import type { LineWriter } from "./line-writer.js";
import type { TerminalStyle } from "./terminal-style.js";
import { toolDoneText, toolStartText } from "./tool-line.js";
import { UsageTally } from "./usage-tally.js";

export interface TurnPrinterOptions {
  /** The answer text (stdout). */
  answers: LineWriter;
  /** Thinking, tool lines, notices: the same writer as `answers` in an interactive terminal, stderr otherwise. */
  ui: LineWriter;
  style: TerminalStyle;
  showThinking: boolean;
}

const ABORT_TEXT = {
  max_steps: "stopped: the turn reached app.max_steps",
  parse_errors: "stopped: too many invalid tool calls (app.max_parse_errors)",
} as const;

/**
 * The terminal chat's one mapping from AgentEvents to text: answer text streams as it comes,
 * thinking is dimmed (or hidden), each tool call is one compact line. One printer per turn.
 */
export class TurnPrinter {
  readonly usage = new UsageTally();
  private thinking = false;
  /** A tool line started and not finished yet (its columns so far). */
  private openTool: { tool: string; used: number } | null = null;
  /** Answer text written in the current step (a `final` with none prints the response itself). */
  private stepText = false;
  private anyText = false;
  /** "reading the prompt 45 %" stands on the status line (a terminal), to be erased by what comes next. */
  private promptShown = false;

  constructor(private readonly options: TurnPrinterOptions) {}

  print(event: AgentEvent): void {
    this.usage.observe(event);
    const { answers, ui, style } = this.options;
    if (this.promptShown && event.event !== "prompt_progress") {
      ui.eraseLine();
      this.promptShown = false;
    }
    switch (event.event) {
      case "run_start":
      case "memory_start":
      case "usage":
        return;
      case "llm_start":
        this.stepText = false;
        return;
      case "thinking_chunk":
        if (!this.options.showThinking || event.delta === "") return;
        this.closeTool();
        if (!this.thinking) {
          // Thinking and answers share a line only on one stream; across two, each starts clean.
          answers.endLine();
          ui.endLine();
          ui.write(style.dim("thinking: "), "thinking: ");
          this.thinking = true;
        }
        ui.write(style.dim(event.delta), event.delta);
        return;
      case "llm_chunk":
        if (event.delta === "") return;
        this.closeThinking();
        this.closeTool();
        // A second step's text starts on a line of its own.
        if (!this.stepText && this.anyText) answers.endLine();
        answers.write(event.delta);
        this.stepText = true;
        this.anyText = true;
        return;
      case "llm_done":
        this.closeThinking();
        return;
      case "tool_start": {
        this.closeThinking();
        this.closeTool();
        answers.endLine();
        ui.endLine();
        const start = toolStartText(event.tool, event.args, ui.width, style);
        ui.write(start.text, start.visible);
        this.openTool = { tool: event.tool, used: start.visible.length };
        return;
      }
      case "tool_done": {
        this.closeThinking();
        let used = 0;
        if (this.openTool?.tool === event.tool) {
          used = this.openTool.used;
          this.openTool = null;
        } else {
          // No tool_start: the call never ran (invalid, declined, waiting for approval).
          this.closeTool();
          answers.endLine();
          ui.endLine();
          const start = toolStartText(event.tool, "", ui.width, style);
          ui.write(start.text.trimEnd(), start.visible.trimEnd());
          used = start.visible.trimEnd().length;
        }
        ui.write(`${toolDoneText(event.status, event.ms, event.preview, used, ui.width, style)}\n`, "\n");
        return;
      }
      case "final":
        this.closeThinking();
        if (!this.stepText && event.response !== "") {
          if (this.anyText) answers.endLine();
          answers.write(event.response);
          this.anyText = true;
        }
        return;
      case "loop_abort":
        this.closeThinking();
        this.closeTool();
        answers.endLine();
        ui.line(style.yellow(ABORT_TEXT[event.reason]));
        return;
      // The tool line is open (its result completes it): progress is not drawn into it.
      case "tool_progress":
        return;
      // The question itself is asked by the chat's elicitation prompt.
      case "elicitation_request":
        return;
      case "tools_changed":
        this.closeThinking();
        this.closeTool();
        answers.endLine();
        ui.line(style.dim(`${event.server} changed its tools: ${event.tools.length === 0 ? "none left" : event.tools.join(", ")}`));
        return;
      // Only a terminal gets the status line (redrawn in place); a pipe gets answers, not progress.
      case "prompt_progress":
        if (!ui.isTTY || (!this.promptShown && !ui.atLineStart)) return;
        if (this.promptShown) ui.eraseLine();
        ui.write(style.dim(`reading the prompt ${Math.floor((event.processed / Math.max(1, event.total)) * 100)} %`), "reading the prompt");
        this.promptShown = true;
        return;
      case "model_load":
        if (event.state === "queued") ui.line(style.yellow(`waiting for memory to load ${event.model}${event.unloading ? ` (unloading ${event.unloading.join(", ")})` : " (the loaded models are busy)"}`));
        return;
      default: {
        const unhandled: never = event;
        return unhandled;
      }
    }
  }

  /**
   * Ends the turn's output. On its own stream (a pipe, a script) the answer is followed by exactly
   * one newline, also when it is empty, so each turn is one line-terminated block.
   */
  finish(): void {
    const { answers, ui } = this.options;
    if (this.promptShown) ui.eraseLine();
    this.promptShown = false;
    this.closeThinking();
    this.closeTool();
    if (answers !== ui && !this.anyText) answers.write("\n");
    answers.endLine();
  }

  private closeThinking(): void {
    if (!this.thinking) return;
    this.thinking = false;
    this.options.ui.endLine();
  }

  private closeTool(): void {
    if (this.openTool === null) return;
    this.openTool = null;
    this.options.ui.endLine();
  }
}
