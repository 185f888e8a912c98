import type { ElicitationCallback } from "../agent/events.js";
import type { ElicitationAnswer } from "../tools/tool-types.js";
import type { ChatInput } from "./chat-input.js";
import { fieldQuestion, formFields, parseField, type FieldValue } from "./elicitation-fields.js";
import type { LineWriter } from "./line-writer.js";
import type { TerminalStyle } from "./terminal-style.js";

/**
 * The terminal chat's answer to an MCP server's question (form mode): the message, then each
 * field asked in turn (a wrong value is asked again). A blank answer skips an optional field
 * (its default, if any, applies) and declines the form at a required one; Ctrl-C at a field
 * cancels it (and the turn). Without a terminal (piped stdin) nobody can be asked: declined,
 * with a line saying why.
 */
export class ChatElicitations {
  constructor(
    private readonly input: ChatInput,
    private readonly ui: LineWriter,
    private readonly style: TerminalStyle,
  ) {}

  readonly ask: ElicitationCallback = async (request, signal) => {
    const { ui, style } = this;
    if (!this.input.interactive) {
      ui.line(style.yellow(`declined ${request.server}'s question ("${request.message}"): with stdin not a terminal nobody can be asked`));
      return { action: "decline" };
    }
    ui.endLine();
    ui.line(`${style.bold(request.server)} asks: ${request.message}`);
    ui.line(style.dim("(a blank answer skips an optional field and declines at a required one; Ctrl-C cancels)"));
    const content: Record<string, FieldValue> = {};
    for (const field of formFields(request.requested_schema)) {
      for (;;) {
        const answer = await this.input.ask(fieldQuestion(field), signal);
        if (answer === null) return signal.aborted ? { action: "decline" } : { action: "cancel" };
        const parsed = parseField(field, answer);
        if ("problem" in parsed) {
          ui.line(style.yellow(parsed.problem));
          continue;
        }
        if ("value" in parsed) content[field.name] = parsed.value;
        else if (field.required) return this.declined(request.server);
        else if (field.default !== undefined) content[field.name] = field.default;
        break;
      }
    }
    return { action: "accept", content } satisfies ElicitationAnswer;
  };

  private declined(server: string): ElicitationAnswer {
    this.ui.line(this.style.yellow(`declined ${server}'s question`));
    return { action: "decline" };
  }
}
