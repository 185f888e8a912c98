import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { SessionRunner } from "../agent/session-runner.js";
import type { TurnRequest } from "../agent/turn-request.js";
import { assertSafeId } from "../shared/safe-id.js";
import { toRuntimeError } from "../shared/runtime-error.js";
import { ChatApprovals } from "./chat-approvals.js";
import { ChatElicitations } from "./chat-elicitations.js";
import { CHAT_HELP, parseChatCommand, resourceMentions, type ChatCommand } from "./chat-command.js";
import type { ChatInput } from "./chat-input.js";
import { runChatTurn } from "./chat-turn.js";
import type { LineWriter } from "./line-writer.js";
import { loadAgent, type AgentLoad } from "./load-agent.js";
import type { TerminalStyle } from "./terminal-style.js";
import { UsageTally } from "./usage-tally.js";

export interface ChatReplOptions {
  runner: SessionRunner;
  input: ChatInput;
  /** stdout: the answers. */
  answers: LineWriter;
  /** Prompts' surroundings, tool lines, thinking, notices: stdout on a terminal, stderr otherwise. */
  ui: LineWriter;
  style: TerminalStyle;
  logger: Logger;
  agent?: string | undefined;
  session?: string | undefined;
  showThinking: boolean;
  showUsage: boolean;
}

/** Exit codes: 0 done, 1 a turn failed (scripts) or the chat could not start, 130 interrupted, 143 terminated. */
export const EXIT = { ok: 0, failed: 1, interrupted: 130, terminated: 143 } as const;

/** What a Ctrl-C would stop right now: a turn, a model load, an approval question. */
type Running = { controller: AbortController };

/**
 * The terminal chat (`local-ai chat`): a prompt, slash commands, and turns on the same
 * SessionRunner every front door uses. Ctrl-C cancels the running turn (or load); a second
 * Ctrl-C, Ctrl-D at the prompt or /exit leaves.
 */
export class ChatRepl {
  private agent = "";
  private sessionId: string;
  private readonly approvals: ChatApprovals;
  private readonly elicitations: ChatElicitations;
  private readonly totals = new UsageTally();
  private running: Running | null = null;
  /** A Ctrl-C already happened (at an empty prompt, or cancelling a turn): the next one exits. */
  private armed = false;
  private failures = 0;
  /** The last turn of this session was cancelled here (the next one discards it, as the chat said). */
  private cancelledHere = false;
  private forcedExit: (code: number) => void = () => undefined;
  /** Set by a forced exit: nothing new starts, the loop unwinds. */
  private ended = false;
  private loop: Promise<number> = Promise.resolve(EXIT.ok);

  constructor(private readonly options: ChatReplOptions) {
    this.sessionId = options.session ?? newSessionId();
    this.approvals = new ChatApprovals(options.input, options.ui, options.style);
    this.elicitations = new ChatElicitations(options.input, options.ui, options.style);
  }

  /**
   * Runs until the user leaves; resolves with the exit code. A forced exit (second Ctrl-C,
   * SIGTERM) resolves at once; `unwound` then says when the cancelled turn has finished unwinding
   * (its checkpoint written), which the caller waits for, bounded, before closing the engines.
   */
  run(): Promise<number> {
    const forced = new Promise<number>((resolve) => (this.forcedExit = resolve));
    this.loop = this.main();
    return Promise.race([this.loop, forced]);
  }

  get unwound(): Promise<unknown> {
    return this.loop.catch(() => undefined);
  }

  /** A Ctrl-C (the key, or SIGINT from outside): cancels what runs; the second one exits. */
  interrupt(): void {
    const { running } = this;
    if (running === null) {
      this.options.input.interruptRead();
      return;
    }
    if (running.controller.signal.aborted || !this.options.input.interactive) {
      // Second Ctrl-C while cancelling, or a script's SIGINT: leave now.
      this.end(EXIT.interrupted);
      return;
    }
    this.armed = true;
    running.controller.abort();
  }

  /** SIGTERM (or stdout gone): cancel whatever runs and end with `code`. */
  terminate(code: number = EXIT.terminated): void {
    this.end(code);
  }

  private end(code: number): void {
    this.ended = true;
    this.running?.controller.abort();
    this.options.input.interruptRead();
    this.forcedExit(code);
  }

  private async main(): Promise<number> {
    const { runner, input, ui, style } = this.options;
    const agents = runner.agents();
    const chosen = this.options.agent === undefined ? agents[0] : agents.find((agent) => agent.name === this.options.agent);
    if (chosen === undefined) {
      ui.line(style.red(`error: ${this.options.agent === undefined ? "no agent is configured under agents" : `unknown agent "${this.options.agent}" (configured: ${agents.map((agent) => agent.name).join(", ")})`}`));
      return EXIT.failed;
    }
    this.agent = chosen.name;
    try {
      assertSafeId("session_id", this.sessionId);
    } catch (error) {
      ui.line(style.red(`error: ${(error as Error).message}`));
      return EXIT.failed;
    }
    if (input.interactive) {
      ui.line(`${style.bold("local-ai chat")} ${style.dim(`· agent ${this.agent} (model ${chosen.model}) · session ${this.sessionId}`)}`);
      ui.line(style.dim("/help lists the commands. Ctrl-C cancels a turn; Ctrl-D exits."));
    }
    const loaded = await this.warmUp();
    if (loaded !== "ready") return loaded === "cancelled" ? EXIT.interrupted : EXIT.failed;
    await this.noticePausedTurn();
    for (;;) {
      const read = await input.read(style.cyan("> "));
      if (this.ended) break;
      if (read.kind === "eof") {
        // Ctrl-D leaves the cursor after the prompt; the shell's prompt belongs on a line of its own.
        if (input.interactive) ui.write("\n");
        break;
      }
      if (read.kind === "interrupt") {
        if (!input.interactive) return EXIT.interrupted;
        if (read.discarded.trim() !== "") continue;
        if (this.armed) break;
        this.armed = true;
        ui.line(style.dim("(Ctrl-C again or Ctrl-D to exit)"));
        continue;
      }
      this.armed = false;
      if (!(await this.handle(parseChatCommand(read.text))) || this.ended) break;
    }
    ui.endLine();
    return this.failures > 0 && !input.interactive ? EXIT.failed : EXIT.ok;
  }

  /** One command or message; false when the chat should end. */
  private async handle(command: ChatCommand): Promise<boolean> {
    const { ui, style } = this.options;
    switch (command.kind) {
      case "empty":
        return true;
      case "message":
        await this.turn({ input: resourceMentions(command.text, this.options.runner.mcpServers()) ?? command.text });
        return true;
      case "prompt":
        await this.turn({ prompt: { server: command.server, name: command.name, arguments: command.arguments } });
        return true;
      case "bad_prompt":
        ui.line(style.yellow(command.problem));
        return true;
      case "prompts":
        await this.listPrompts();
        return true;
      case "exit":
        return false;
      case "help":
        for (const line of CHAT_HELP.split("\n")) ui.line(line);
        return true;
      case "new":
        this.switchSession(newSessionId());
        ui.line(style.dim(`new session ${this.sessionId}`));
        return true;
      case "session":
        if (command.id === undefined) ui.line(`session ${this.sessionId}`);
        else {
          try {
            this.switchSession(assertSafeId("session_id", command.id));
          } catch (error) {
            ui.line(style.red(`error: ${(error as Error).message}`));
            return true;
          }
          ui.line(style.dim(`session ${this.sessionId}`));
          await this.noticePausedTurn();
        }
        return true;
      case "agent":
        await this.switchAgent(command.name);
        return true;
      case "resume":
        await this.resume();
        return true;
      case "usage":
        ui.line(this.totals.turns === 0 ? "no turns yet" : `usage: ${this.totals.describe()}`);
        return true;
      case "unknown":
        ui.line(style.yellow(`unknown command /${command.name} (/help lists the commands; //text sends a message that starts with /)`));
        return true;
      default: {
        const unhandled: never = command;
        return unhandled;
      }
    }
  }

  /** Runs `work` as what a Ctrl-C stops (a turn, a load, a question): its signal aborts on the key. */
  private async cancellable<T>(work: (signal: AbortSignal) => Promise<T>): Promise<{ value: T; cancelled: boolean }> {
    const controller = new AbortController();
    this.running = { controller };
    const stopWatching = this.options.input.watchTurn(() => this.interrupt());
    try {
      return { value: await work(controller.signal), cancelled: controller.signal.aborted };
    } finally {
      stopWatching();
      this.running = null;
    }
  }

  private async turn(request: Omit<TurnRequest, "session_id" | "agent">): Promise<void> {
    const { value: outcome } = await this.cancellable((signal) =>
      runChatTurn({ ...this.options, approvals: this.approvals, elicitations: this.elicitations }, { ...request, session_id: this.sessionId, agent: this.agent }, signal, { cancelledHere: this.cancelledHere }),
    );
    if (outcome.kind === "finished") this.totals.add(outcome.usage);
    if (outcome.kind === "failed") this.failures++;
    this.cancelledHere = outcome.kind === "cancelled";
  }

  /** /prompts: each as the command that runs it, its arguments (required ones bare) and description. */
  private async listPrompts(): Promise<void> {
    const { runner, ui, style } = this.options;
    const { value: prompts, cancelled } = await this.cancellable(async (signal) => {
      try {
        return await runner.mcpPrompts(signal);
      } catch (error) {
        if (!signal.aborted) ui.line(style.red(`error: ${toRuntimeError(error).message}`));
        return [];
      }
    });
    if (cancelled) return;
    if (prompts.length === 0) return ui.line("no MCP server offers prompts");
    for (const prompt of prompts) {
      const args = prompt.arguments.map((arg) => (arg.required === true ? `${arg.name}=…` : `[${arg.name}=…]`)).join(" ");
      ui.line(`/${prompt.server}:${prompt.name}${args === "" ? "" : ` ${args}`}${prompt.description === undefined ? "" : `  ${style.dim(prompt.description)}`}`);
    }
  }

  /** /resume: a paused turn asks about its waiting call first; an interrupted one just goes on. */
  private async resume(): Promise<void> {
    const { runner, ui, style } = this.options;
    let paused: Awaited<ReturnType<SessionRunner["pausedCall"]>>;
    try {
      paused = await runner.pausedCall(this.sessionId);
    } catch (error) {
      ui.line(style.red(`error: ${toRuntimeError(error).message}`));
      return;
    }
    if (paused === null) return this.turn({ resume: true });
    const { value: decision, cancelled } = await this.cancellable((signal) => this.approvals.ask({ tool: paused.tool, args: paused.args, server: "", step: 0, call_id: "" }, signal));
    if (cancelled) return ui.line(style.yellow("cancelled"));
    await this.turn({ resume: true, approve_execution: decision === "approve" });
  }

  private switchSession(id: string): void {
    this.sessionId = id;
    this.cancelledHere = false;
    // "always" was said about the session that was running; a new one starts with nothing approved.
    this.approvals.forget();
  }

  private async switchAgent(name: string | undefined): Promise<void> {
    const { runner, ui, style } = this.options;
    const agents = runner.agents();
    if (name === undefined) {
      for (const agent of agents) ui.line(`${agent.name === this.agent ? "*" : " "} ${agent.name} ${style.dim(`(model ${agent.model})`)}`);
      return;
    }
    const agent = agents.find((candidate) => candidate.name === name);
    if (agent === undefined) {
      ui.line(style.red(`unknown agent "${name}" (configured: ${agents.map((candidate) => candidate.name).join(", ")})`));
      return;
    }
    const previous = this.agent;
    this.agent = agent.name;
    ui.line(style.dim(`agent ${agent.name} (model ${agent.model})`));
    if ((await this.warmUp()) !== "ready") {
      this.agent = previous;
      ui.line(style.dim(`staying with agent ${previous}`));
    }
  }

  /** Loads the agent's model (and starts the tool servers) with a progress bar before the next answer. */
  private async warmUp(): Promise<AgentLoad> {
    const { runner, ui, style } = this.options;
    const model = runner.agents().find((agent) => agent.name === this.agent)?.model ?? this.agent;
    const agent = this.agent;
    return (await this.cancellable((signal) => loadAgent({ runner, ui, style }, agent, model, signal))).value;
  }

  /** A turn paused for approval by another front door waits in this session: say how to answer it. */
  private async noticePausedTurn(): Promise<void> {
    const { runner, ui, style } = this.options;
    const paused = await runner.pausedCall(this.sessionId).catch(() => null);
    if (paused !== null) ui.line(style.yellow(`this session has a turn waiting for approval of ${paused.tool}: /resume asks you about it`));
  }
}

function newSessionId(): string {
  return randomBytes(4).toString("hex");
}
