import { createInterface, type Interface } from "node:readline";
import type { ChatInput, PromptResult } from "./chat-input.js";

/**
 * Lines from a pipe or a file: one turn per line, in order, nothing echoed, nobody to ask. A
 * SIGINT (there are no keys) reaches the chat through the process signal instead.
 */
export class PipedInput implements ChatInput {
  readonly interactive = false;
  private readonly lines: AsyncIterator<string>;
  private readonly reader: Interface;
  private pending: ((result: PromptResult) => void) | null = null;
  /** The line being waited for; an interrupted read leaves it here for the next read. */
  private nextLine: Promise<IteratorResult<string>> | null = null;

  constructor(stdin: NodeJS.ReadableStream) {
    this.reader = createInterface({ input: stdin, terminal: false, crlfDelay: Infinity });
    // The iterator buffers lines that arrive while a turn runs; none is lost.
    this.lines = this.reader[Symbol.asyncIterator]();
  }

  read(): Promise<PromptResult> {
    return new Promise<PromptResult>((resolve) => {
      this.pending = resolve;
      const next = (this.nextLine ??= this.lines.next());
      next.then(
        (line) => {
          if (this.nextLine !== next || this.pending !== resolve) return;
          this.nextLine = null;
          this.settle(line.done === true ? { kind: "eof" } : { kind: "line", text: line.value });
        },
        () => {
          if (this.pending === resolve) this.settle({ kind: "eof" });
        },
      );
    });
  }

  interruptRead(): void {
    this.settle({ kind: "interrupt", discarded: "" });
  }

  watchTurn(): () => void {
    return () => undefined;
  }

  ask(): Promise<string | null> {
    return Promise.resolve(null);
  }

  close(): void {
    this.reader.close();
  }

  private settle(result: PromptResult): void {
    const resolve = this.pending;
    this.pending = null;
    resolve?.(result);
  }
}
