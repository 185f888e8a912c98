/** What the prompt gave back: a line, a Ctrl-C (with the text it discarded), or the end of input. */
export type PromptResult = { kind: "line"; text: string } | { kind: "interrupt"; discarded: string } | { kind: "eof" };

/** Where the chat's lines come from: a terminal (tty-input.ts) or a pipe (piped-input.ts). */
export interface ChatInput {
  /** A person at a terminal: prompts, questions, keys. */
  readonly interactive: boolean;
  /** Waits for the next line. */
  read(prompt: string): Promise<PromptResult>;
  /** Ends a pending read as an interrupt (a SIGINT from outside the terminal). */
  interruptRead(): void;
  /** While a turn runs: `onInterrupt` for each Ctrl-C key; returns the function that stops watching. */
  watchTurn(onInterrupt: () => void): () => void;
  /** Asks mid-turn and returns the answer; null when nobody can be asked or `signal` aborted first. */
  ask(question: string, signal: AbortSignal): Promise<string | null>;
  /** Gives the terminal back as it was (cooked mode, stdin released). */
  close(): void;
}
