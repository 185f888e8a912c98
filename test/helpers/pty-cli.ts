import { after } from "node:test";
import { stripVTControlCharacters } from "node:util";
import pty from "@lydell/node-pty";
import { CLI_PATH } from "./cli-process.js";

/** Every pseudo-terminal CLI a test file started; a failed test must not leave one running. */
const live = new Set<PtyCli>();
after(async () => {
  await Promise.all([...live].map((cli) => cli.stop()));
});

/**
 * The built CLI in a real pseudo-terminal (node-pty), the way a person runs `local-ai chat`:
 * stdin and stdout are a TTY, keys are bytes ("\r" Enter, "\x03" Ctrl-C, "\x04" Ctrl-D). Tests
 * synchronize on what appears on the screen, never on time.
 */
export class PtyCli {
  /** Everything the terminal received, escape codes included. */
  output = "";
  readonly exited: Promise<{ code: number; signal: number | undefined }>;
  private readonly term: pty.IPty;
  private done = false;
  private listeners: Array<() => void> = [];

  constructor(args: readonly string[], options: { cwd: string; env?: Record<string, string | undefined>; columns?: number }) {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, LOCAL_AI_LOG_LEVEL: "warn", TERM: "xterm-256color", ...options.env })) {
      if (value !== undefined) env[key] = value;
    }
    this.term = pty.spawn(process.execPath, [CLI_PATH, ...args], { cols: options.columns ?? 120, rows: 40, cwd: options.cwd, env });
    this.term.onData((data) => {
      this.output += data;
      for (const listener of [...this.listeners]) listener();
    });
    this.exited = new Promise((resolve) =>
      this.term.onExit(({ exitCode, signal }) => {
        this.done = true;
        live.delete(this);
        for (const listener of [...this.listeners]) listener();
        resolve({ code: exitCode, signal });
      }),
    );
    live.add(this);
  }

  /** The screen's text without escape codes, "\r\n" as "\n". */
  get text(): string {
    return stripVTControlCharacters(this.output).replace(/\r+\n/g, "\n");
  }

  type(keys: string): void {
    this.term.write(keys);
  }

  /**
   * Resolves once the plain text from `from` on matches, with the match and where it ended; fails
   * with the screen so far when the process exits first or after `timeoutMs` (a hang, not a pace).
   */
  waitFor(pattern: RegExp, from = 0, timeoutMs = 90_000): Promise<{ match: RegExpMatchArray; end: number }> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const text = this.text;
        const match = text.slice(from).match(pattern);
        if (match?.index !== undefined) {
          finish();
          resolve({ match, end: from + match.index + match[0].length });
          return true;
        }
        if (this.done) {
          finish();
          reject(new Error(`the CLI exited before ${String(pattern)} appeared; screen:\n${text.slice(-3000)}`));
          return true;
        }
        return false;
      };
      const onChange = (): void => void check();
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out waiting for ${String(pattern)}; screen:\n${this.text.slice(-3000)}`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.listeners = this.listeners.filter((listener) => listener !== onChange);
      };
      if (!check()) this.listeners.push(onChange);
    });
  }

  /** SIGTERM, then SIGKILL for one that does not stop. */
  async stop(): Promise<void> {
    if (this.done) return;
    this.term.kill("SIGTERM");
    const timer = setTimeout(() => {
      if (!this.done) this.term.kill("SIGKILL");
    }, 5000);
    await this.exited;
    clearTimeout(timer);
  }
}
