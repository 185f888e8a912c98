/** A Pod event as the client receives it (the server's types are not trusted across the socket). */
export interface WirePodEvent {
  event: string;
  data: Record<string, unknown>;
}

const str = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/**
 * `local-ai pod`'s readable view: text streams as text, everything else is one compact line.
 * Tracks whether the cursor is mid-line so a line never starts inside streamed text.
 */
export class PodEventPrinter {
  private midLine = false;
  private thinking = false;
  private readonly names = new Map<string, string>();

  constructor(private readonly out: NodeJS.WritableStream) {}

  print(message: WirePodEvent): void {
    const { data } = message;
    switch (message.event) {
      case "text_delta":
        this.closeThinking();
        this.stream(str(data.text));
        return;
      case "thinking_delta":
        if (!this.thinking) this.stream(this.midLine ? "\n(thinking) " : "(thinking) ");
        this.thinking = true;
        this.stream(str(data.text));
        return;
      case "thinking_done":
        this.closeThinking();
        return;
      case "text_done":
        this.endLine();
        return;
      case "tool_call_start":
        this.names.set(str(data.id), str(data.name));
        return;
      case "tool_call_args_delta":
        return;
      case "tool_call_done":
        return this.line(`-> ${str(data.name)} ${str(data.arguments)} [${str(data.id)}]`);
      case "tool_result":
        return this.line(`<- ${this.names.get(str(data.id)) ?? str(data.id)}${data.is_error === true ? " (error)" : ""}: ${str(data.output)}`);
      case "turn_start":
        return this.line(`[turn ${str(data.turn)}]`);
      case "turn_end":
        return this.line(`[turn ${str(data.turn)} ${data.result === "paused" ? "paused: type resume to approve, cancel to decline" : typeof data.reason === "string" ? data.reason : "finished"}]`);
      case "status": {
        const pending = data.pending as { name?: unknown; arguments?: unknown } | undefined;
        const waiting = pending ? ` · waiting on ${str(pending.name)} ${str(pending.arguments)}` : "";
        return this.line(`[status] ${str(data.state)} · session ${str(data.session_id)} · pod ${str(data.pod_name)}${waiting}`);
      }
      case "usage":
        return this.line(`[usage] in ${str(data.input_tokens)} · out ${str(data.output_tokens)}`);
      case "error":
        return this.line(`[error ${str(data.code)}] ${str(data.message)}`);
      case "history": {
        const items = Array.isArray(data.items) ? (data.items as Array<Record<string, unknown>>) : [];
        this.line(`[history] ${items.length} messages`);
        for (const item of items) this.line(`  ${historyLine(item)}`);
        return;
      }
      default:
        return this.line(JSON.stringify(message));
    }
  }

  private closeThinking(): void {
    if (!this.thinking) return;
    this.thinking = false;
    this.endLine();
  }

  private stream(text: string): void {
    if (text === "") return;
    this.out.write(text);
    this.midLine = !text.endsWith("\n");
  }

  private endLine(): void {
    if (this.midLine) this.out.write("\n");
    this.midLine = false;
  }

  private line(text: string): void {
    this.endLine();
    this.out.write(`${text}\n`);
  }
}

function historyLine(item: Record<string, unknown>): string {
  const content = typeof item.content === "string" ? item.content : JSON.stringify(item.content);
  const calls = Array.isArray(item.tool_calls) ? ` (calls ${(item.tool_calls as Array<{ name?: unknown }>).map((c) => str(c.name)).join(", ")})` : "";
  const who = item.role === "tool" ? `tool ${str(item.name)}` : str(item.role);
  return `${who}: ${content.replace(/\s+/g, " ")}${calls}`;
}
