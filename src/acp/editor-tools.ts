import { methods, type AgentContext, type TerminalHandle } from "@agentclientprotocol/sdk";
import { raceAbort } from "../shared/abort.js";
import { matchTools } from "../tools/tool-glob.js";
import { cancelledResult, errorResult, timeoutResult } from "../tools/tool-results.js";
import type { ToolCallResult, ToolDescriptor, ToolProvider } from "../tools/tool-types.js";
import { assertRealInside, resolveInWorkspace, type PathParam } from "./workspace-path.js";

export const EDITOR_TOOL_NAMES = { read: "read_text_file", write: "write_text_file", run: "run_command" } as const;

/** The `server` of the editor's tools (globs: `editor/*`). */
export const EDITOR_SERVER = "editor";

/** A command that runs longer is killed: a dev server or a watcher would otherwise hold the turn forever. */
export const RUN_COMMAND_TIMEOUT_MS = 300_000;

/** What the client advertised in `initialize` (`clientCapabilities.fs`, `.terminal`). */
export interface EditorCapabilities {
  readTextFile: boolean;
  writeTextFile: boolean;
  terminal: boolean;
}

export interface EditorToolsOptions {
  client: AgentContext;
  sessionId: string;
  cwd: string;
  capabilities: EditorCapabilities;
  /** Cap on a command's retained output (app.max_tool_output_bytes). */
  maxOutputBytes: number;
}

const PATH_PROPERTY = { type: "string", description: "File path, relative to the workspace folder (or absolute inside it)" };

const DESCRIPTORS: Record<keyof typeof EDITOR_TOOL_NAMES, Omit<ToolDescriptor, "server">> = {
  read: {
    name: EDITOR_TOOL_NAMES.read,
    remoteName: EDITOR_TOOL_NAMES.read,
    description: "Read a text file of the workspace as the editor has it (unsaved changes included).",
    inputSchema: {
      type: "object",
      properties: { path: PATH_PROPERTY, line: { type: "integer", minimum: 1, description: "First line to read (1-based)" }, limit: { type: "integer", minimum: 1, description: "Most lines to read" } },
      required: ["path"],
      additionalProperties: false,
    },
    requiresApproval: false,
  },
  write: {
    name: EDITOR_TOOL_NAMES.write,
    remoteName: EDITOR_TOOL_NAMES.write,
    description: "Write a text file of the workspace through the editor (creates or replaces it). The user is asked first.",
    inputSchema: { type: "object", properties: { path: PATH_PROPERTY, content: { type: "string", description: "The whole new content" } }, required: ["path", "content"], additionalProperties: false },
    requiresApproval: true,
  },
  run: {
    name: EDITOR_TOOL_NAMES.run,
    remoteName: EDITOR_TOOL_NAMES.run,
    description: "Run a command in the editor's terminal and return its output and exit code. The user is asked first.",
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The program to run" },
        args: { type: "array", items: { type: "string" }, description: "Its arguments" },
        cwd: { type: "string", description: "Working directory, relative to the workspace folder (default: the workspace folder)" },
      },
      required: ["command"],
      additionalProperties: false,
    },
    requiresApproval: true,
  },
};

/**
 * The tools an editor carries out itself (ACP `fs/*`, `terminal/*`), offered when the client
 * advertised them: the model reads the buffers the user sees and the editor shows every change.
 * Paths stay inside the session's cwd; writing and running are gated by approval (the editor asks).
 */
export class EditorToolProvider implements ToolProvider {
  private readonly descriptors: ToolDescriptor[];

  constructor(private readonly options: EditorToolsOptions) {
    const { capabilities } = options;
    const offered = [capabilities.readTextFile ? DESCRIPTORS.read : null, capabilities.writeTextFile ? DESCRIPTORS.write : null, capabilities.terminal ? DESCRIPTORS.run : null];
    this.descriptors = offered.filter((tool) => tool !== null).map((tool) => ({ ...tool, server: EDITOR_SERVER }));
  }

  async start(): Promise<void> {}

  list(patterns: readonly string[]): ToolDescriptor[] {
    return matchTools(this.descriptors, patterns).tools;
  }

  async call(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolCallResult> {
    const signal = options.signal ?? new AbortController().signal;
    if (signal.aborted) return cancelledResult();
    try {
      switch (name) {
        case EDITOR_TOOL_NAMES.read:
          return await this.read(args, signal);
        case EDITOR_TOOL_NAMES.write:
          return await this.write(args, signal);
        case EDITOR_TOOL_NAMES.run:
          return await this.run(args, signal);
        default:
          return errorResult(`unknown tool "${name}"`, false);
      }
    } catch (error) {
      if (signal.aborted) return cancelledResult();
      // The editor said no (a missing file, a refused write) or the path was outside the workspace.
      return errorResult(error instanceof Error ? error.message : String(error), false);
    }
  }

  /** A path or cwd outside the workspace: refused before the user is asked (and again by `call`). */
  async refusal(name: string, args: Record<string, unknown>): Promise<string | null> {
    try {
      if (name === EDITOR_TOOL_NAMES.read || name === EDITOR_TOOL_NAMES.write) await this.path(args.path, "path");
      else if (name === EDITOR_TOOL_NAMES.run && args.cwd !== undefined) await this.path(args.cwd, "cwd");
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  async close(): Promise<void> {}

  private async path(given: unknown, param: PathParam): Promise<string> {
    const text = String(given);
    const absolute = resolveInWorkspace(this.options.cwd, text, param);
    await assertRealInside(this.options.cwd, absolute, text, param);
    return absolute;
  }

  private async read(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolCallResult> {
    const path = await this.path(args.path, "path");
    const response = await this.options.client.request(
      methods.client.fs.readTextFile,
      { sessionId: this.options.sessionId, path, ...(typeof args.line === "number" ? { line: args.line } : {}), ...(typeof args.limit === "number" ? { limit: args.limit } : {}) },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    return { status: "ok", content: response.content, retryable: false };
  }

  private async write(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolCallResult> {
    const path = await this.path(args.path, "path");
    const content = String(args.content);
    await this.options.client.request(methods.client.fs.writeTextFile, { sessionId: this.options.sessionId, path, content }, { cancellationSignal: signal, stopWaitingOnCancel: true });
    return { status: "ok", content: `wrote ${Buffer.byteLength(content)} bytes to ${path}`, retryable: false };
  }

  private async run(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolCallResult> {
    const cwd = args.cwd === undefined ? this.options.cwd : await this.path(args.cwd, "cwd");
    const command = String(args.command);
    const commandArgs = Array.isArray(args.args) ? args.args.map(String) : [];
    const terminal = await this.options.client.createTerminal(
      { sessionId: this.options.sessionId, command, args: commandArgs, cwd, outputByteLimit: this.options.maxOutputBytes },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    try {
      return await this.awaitCommand(terminal, signal);
    } finally {
      // Releasing kills a command still running; the editor keeps showing its output.
      await terminal.release().catch(() => undefined);
    }
  }

  private async awaitCommand(terminal: TerminalHandle, signal: AbortSignal): Promise<ToolCallResult> {
    const deadline = AbortSignal.timeout(RUN_COMMAND_TIMEOUT_MS);
    const stop = AbortSignal.any([signal, deadline]);
    let exit: { exitCode?: number | null; signal?: string | null };
    try {
      exit = await raceAbort(terminal.waitForExit(), stop);
    } catch (error) {
      if (!stop.aborted) throw error;
      await terminal.kill().catch(() => undefined);
      return signal.aborted ? cancelledResult() : timeoutResult(EDITOR_TOOL_NAMES.run, RUN_COMMAND_TIMEOUT_MS);
    }
    const output = await terminal.currentOutput();
    const status = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.exitCode ?? "unknown"}`;
    const text = `${status}${output.truncated ? " (output truncated to its end)" : ""}\n${output.output}`;
    return exit.exitCode === 0 ? { status: "ok", content: text, retryable: false } : { status: "error", content: text, retryable: false };
  }
}
