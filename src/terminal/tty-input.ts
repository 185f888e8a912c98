import { createInterface, emitKeypressEvents, type Interface } from "node:readline";
import type { ChatInput, PromptResult } from "./chat-input.js";

interface Key {
  name?: string;
  ctrl?: boolean;
}

const HISTORY_SIZE = 500;

/**
 * A person at a terminal. Each prompt is a fresh readline interface (line editing, history kept
 * across prompts); while a turn runs there is none, and keys are read raw: Ctrl-C cancels, the
 * rest is ignored (nothing echoes into the streamed answer).
 *
 * The terminal stays in raw mode for the whole chat, between prompts too: in cooked mode a Ctrl-C
 * would be a SIGINT to the whole foreground process group, and would kill the MCP servers the
 * chat started. In raw mode it is just a key.
 */
export class TtyInput implements ChatInput {
  readonly interactive = true;
  private history: string[] = [];
  private reader: Interface | null = null;
  private pending: ((result: PromptResult) => void) | null = null;
  private watching = false;

  constructor(
    private readonly stdin: NodeJS.ReadStream,
    private readonly output: NodeJS.WritableStream,
  ) {
    emitKeypressEvents(stdin);
    this.raw(true);
  }

  read(prompt: string): Promise<PromptResult> {
    return new Promise<PromptResult>((resolve) => {
      const reader = this.open(this.history, HISTORY_SIZE);
      reader.on("history", (history: string[]) => (this.history = history));
      let settled = false;
      const settle = (result: PromptResult): void => {
        if (settled) return;
        settled = true;
        this.pending = null;
        this.closeReader(reader);
        resolve(result);
      };
      this.pending = settle;
      reader.on("line", (text: string) => settle({ kind: "line", text }));
      reader.on("SIGINT", () => {
        const discarded = reader.line;
        // Like a shell: the ^C stays visible and the next prompt starts on a new line.
        this.output.write("^C\n");
        settle({ kind: "interrupt", discarded });
      });
      // Ctrl-D on an empty line closes the interface: the end of input.
      reader.on("close", () => settle({ kind: "eof" }));
      reader.setPrompt(prompt);
      reader.prompt();
    });
  }

  interruptRead(): void {
    if (this.pending === null) return;
    this.output.write("\n");
    this.pending({ kind: "interrupt", discarded: "" });
  }

  watchTurn(onInterrupt: () => void): () => void {
    const onKey = (_text: string | undefined, key: Key | undefined): void => {
      if (key?.ctrl === true && key.name === "c") onInterrupt();
    };
    this.stdin.on("keypress", onKey);
    this.watching = true;
    this.stdin.resume();
    return () => {
      this.stdin.off("keypress", onKey);
      this.watching = false;
      this.stdin.pause();
    };
  }

  ask(question: string, signal: AbortSignal): Promise<string | null> {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise<string | null>((resolve) => {
      // No history: answers are not prompts worth recalling.
      const reader = this.open([], 0);
      let settled = false;
      const settle = (answer: string | null): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        this.closeReader(reader);
        resolve(answer);
      };
      const onAbort = (): void => {
        this.output.write("\n");
        settle(null);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      // Ctrl-C is the turn's (watchTurn's key handler cancels it, which aborts `signal`).
      reader.on("SIGINT", () => undefined);
      reader.on("close", () => settle(null));
      reader.question(question, (answer) => settle(answer));
    });
  }

  close(): void {
    if (this.reader !== null) this.closeReader(this.reader);
    this.raw(false);
    this.stdin.pause();
  }

  private open(history: string[], historySize: number): Interface {
    const reader = createInterface({ input: this.stdin, output: this.output, terminal: true, history, historySize, removeHistoryDuplicates: true, tabSize: 4 });
    this.reader = reader;
    return reader;
  }

  /**
   * readline leaves raw mode and pauses stdin when it closes: take raw mode back at once. (Its
   * own "close" listeners must stay: one of them detaches it from stdin's keypresses.)
   */
  private closeReader(reader: Interface): void {
    reader.close();
    if (this.reader === reader) this.reader = null;
    this.raw(true);
    if (this.watching) this.stdin.resume();
  }

  private raw(on: boolean): void {
    if (this.stdin.isTTY) this.stdin.setRawMode(on);
  }
}
