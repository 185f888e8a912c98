import type { ConfigState } from "../../config/load-config.js";
import type { LogLevel } from "../../config/log-levels.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { settlesWithin } from "../../shared/abort.js";
import type { PackageInfo } from "../../shared/version.js";
import { ChatRepl, EXIT } from "../../terminal/chat-repl.js";
import type { ChatInput } from "../../terminal/chat-input.js";
import { LineWriter } from "../../terminal/line-writer.js";
import { PipedInput } from "../../terminal/piped-input.js";
import { createStyle, wantsColor } from "../../terminal/terminal-style.js";
import { TtyInput } from "../../terminal/tty-input.js";
import { installProcessGuards } from "../process/process-guards.js";
import { createRuntime } from "../runtime/runtime.js";

export interface TerminalChatOptions {
  configState: ConfigState & { status: "loaded" };
  info: PackageInfo;
  agent?: string | undefined;
  session?: string | undefined;
  showThinking: boolean;
  showUsage: boolean;
}

export interface TerminalChatIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: Readonly<Record<string, string | undefined>>;
}

/** Bound on closing the engines and MCP servers at exit; a stuck child must not keep the terminal. */
const CLOSE_TIMEOUT_MS = 5000;

/**
 * `local-ai chat`: the terminal front door built on the same runtime as the servers. Answers go to
 * stdout; status lines go to stdout on an interactive terminal and to stderr otherwise (so a
 * script's stdout holds only answers); logs always go to stderr. Resolves with the exit code once
 * stdout has taken everything written (the caller then exits: a forced exit leaves a turn behind).
 */
export async function runTerminalChat(options: TerminalChatOptions, io: TerminalChatIo): Promise<number> {
  const { config } = options.configState;
  const logger = createLogger({ level: chatLogLevel(config.app.log_level), env: io.env });
  const answers = new LineWriter(io.stdout);
  const ui = io.stdout.isTTY ? answers : new LineWriter(io.stderr);
  // A person needs a terminal on both ends: keys in, prompts and questions out.
  const interactive = io.stdin.isTTY && ui.isTTY;
  const input: ChatInput = interactive ? new TtyInput(io.stdin, ui.stream) : new PipedInput(io.stdin);
  const runtime = createRuntime({ configState: options.configState, logger, info: options.info, env: io.env });
  const repl = new ChatRepl({
    runner: runtime.sessionRunner(),
    input,
    answers,
    ui,
    style: createStyle(wantsColor(ui.isTTY, io.env)),
    logger,
    agent: options.agent,
    session: options.session,
    showThinking: options.showThinking,
    showUsage: options.showUsage,
  });
  // A reader that went away (`local-ai chat < questions | head -1`) ends the chat quietly, as a
  // pipeline expects; any other stdout failure is logged and ends it with 1.
  const onStdoutError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") logger.error({ err: error }, "cannot write to stdout");
    repl.terminate(error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED" ? EXIT.ok : EXIT.failed);
  };
  io.stdout.on("error", onStdoutError);
  const onInterrupt = (): void => repl.interrupt();
  const onTerminate = (): void => repl.terminate();
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onTerminate);
  process.on("SIGHUP", onTerminate);
  // An uncaught exception leaves state unknown: give the terminal back, then exit.
  const disposeGuards = installProcessGuards(logger, (exitCode) => {
    input.close();
    void flushLogger(logger, 500).then(() => process.exit(exitCode));
  });
  let code: number;
  try {
    code = await repl.run();
  } finally {
    // A forced exit cancelled the turn: let it unwind (checkpoint written) before the engines close.
    await settlesWithin(repl.unwound, CLOSE_TIMEOUT_MS);
    input.close();
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onTerminate);
    process.off("SIGHUP", onTerminate);
    disposeGuards();
    if (!(await settlesWithin(runtime.close(), CLOSE_TIMEOUT_MS))) logger.warn({ ms: CLOSE_TIMEOUT_MS }, "engines and tool servers did not close in time");
    await flushLogger(logger);
  }
  // Everything written has reached stdout before the caller exits (a pipe to a script must get the last answer).
  await new Promise<void>((resolve) => io.stdout.write("", () => resolve()));
  return code;
}

/**
 * Info logs ("turn finished", "MCP server started") would land between the lines of a chat, so
 * the chat logs warnings and worse unless the config asks for less; LOCAL_AI_LOG_LEVEL still
 * wins (createLogger) for a user who wants to see everything.
 */
function chatLogLevel(configured: LogLevel): LogLevel {
  const quieter: readonly LogLevel[] = ["warn", "error", "fatal", "silent"];
  return quieter.includes(configured) ? configured : "warn";
}
