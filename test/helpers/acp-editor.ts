import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { writeFileSync } from "node:fs";
import { PassThrough, Readable, Writable } from "node:stream";
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type ClientCapabilities,
  type ClientConnection,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type InitializeResponse,
  type ReadTextFileRequest,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type WriteTextFileRequest,
} from "@agentclientprotocol/sdk";
import { CLI_PATH, trackChild } from "./cli-process.js";
import { TestTerminals } from "./acp-test-terminals.js";

/** A permission request as the editor saw it, with the signal the SDK aborts when the agent withdraws it. */
export interface SeenPermission {
  request: RequestPermissionRequest;
  signal: AbortSignal;
}

export type PermissionPolicy = (seen: SeenPermission) => Promise<RequestPermissionResponse> | RequestPermissionResponse;

export const choose = (optionId: string): RequestPermissionResponse => ({ outcome: { outcome: "selected", optionId } });

export type ToolUpdate = Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>;

/** The `tool_call` / `tool_call_update`s of one call, in arrival order. */
export const toolUpdates = (editor: AcpEditor, sessionId: string, id: string): ToolUpdate[] =>
  editor.updates(sessionId).filter((u): u is ToolUpdate => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id);

/** `tool_call:pending`, `tool_call_update:in_progress`...: how a call was shown. */
export const statusTrail = (updates: ToolUpdate[]): string[] => updates.map((u) => `${u.sessionUpdate}:${u.status ?? "-"}`);

/**
 * An editor as Zed or JetBrains is one: it spawns `local-ai serve-stdio --protocol acp`, speaks
 * ACP through the official SDK's client side, shows `session/update`s, answers permission
 * requests by a policy, and serves `fs/*` from its buffers (which may differ from disk) and
 * `terminal/*` by running the command. Every stdout line is kept to check the stdout firewall.
 */
export class AcpEditor {
  readonly child: ChildProcessWithoutNullStreams;
  readonly connection: ClientConnection;
  readonly notifications: SessionNotification[] = [];
  readonly permissions: SeenPermission[] = [];
  readonly reads: ReadTextFileRequest[] = [];
  readonly writes: WriteTextFileRequest[] = [];
  /** Open buffers by absolute path: what `fs/read_text_file` answers (falls back to "not found"). */
  readonly buffers = new Map<string, string>();
  readonly terminals = new TestTerminals();
  stdout = "";
  stderr = "";
  permissionPolicy: PermissionPolicy = () => choose("allow_once");
  /** The `elicitation/create` requests the agent sent (an editor that advertised `elicitation.form`). */
  readonly elicitations: CreateElicitationRequest[] = [];
  elicitationPolicy: (request: CreateElicitationRequest) => CreateElicitationResponse = () => ({ action: "decline" });
  /** Also write `fs/write_text_file` to disk as real editors do (following symlinks), not only to the buffer. */
  writeThrough = false;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private listeners: Array<() => void> = [];

  constructor(args: readonly string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
    this.child = spawn(process.execPath, [CLI_PATH, "serve-stdio", "--protocol", "acp", ...args], {
      cwd: options.cwd,
      env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    trackChild(this.child);
    this.exited = new Promise((resolve) => this.child.on("exit", (code, signal) => resolve({ code, signal })));
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => (this.stderr += chunk));
    this.child.stdin.on("error", () => undefined);
    // One copy of stdout for the firewall check, one for the SDK.
    const tap = new PassThrough();
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8");
      tap.write(chunk);
    });
    this.child.stdout.on("end", () => tap.end());
    const stream = ndJsonStream(Writable.toWeb(this.child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(tap) as ReadableStream<Uint8Array>);
    const app = client({ name: "test-editor" })
      .onNotification(methods.client.session.update, (ctx) => {
        this.notifications.push(ctx.params);
        for (const listener of [...this.listeners]) listener();
      })
      .onRequest(methods.client.session.requestPermission, async (ctx) => {
        const seen = { request: ctx.params, signal: ctx.signal };
        this.permissions.push(seen);
        for (const listener of [...this.listeners]) listener();
        return this.permissionPolicy(seen);
      })
      .onRequest(methods.client.elicitation.create, (ctx) => {
        this.elicitations.push(ctx.params);
        for (const listener of [...this.listeners]) listener();
        return this.elicitationPolicy(ctx.params);
      })
      .onRequest(methods.client.fs.readTextFile, (ctx) => {
        this.reads.push(ctx.params);
        const content = this.buffers.get(ctx.params.path);
        if (content === undefined) throw new Error(`no such file: ${ctx.params.path}`);
        return { content };
      })
      .onRequest(methods.client.fs.writeTextFile, (ctx) => {
        this.writes.push(ctx.params);
        this.buffers.set(ctx.params.path, ctx.params.content);
        if (this.writeThrough) writeFileSync(ctx.params.path, ctx.params.content);
        return {};
      })
      .onRequest(methods.client.terminal.create, (ctx) => this.terminals.create(ctx.params))
      .onRequest(methods.client.terminal.output, (ctx) => this.terminals.output(ctx.params.terminalId))
      .onRequest(methods.client.terminal.waitForExit, (ctx) => this.terminals.waitForExit(ctx.params.terminalId))
      .onRequest(methods.client.terminal.kill, (ctx) => this.terminals.kill(ctx.params.terminalId))
      .onRequest(methods.client.terminal.release, (ctx) => this.terminals.release(ctx.params.terminalId));
    this.connection = app.connect(stream);
  }

  get agent(): ClientConnection["agent"] {
    return this.connection.agent;
  }

  initialize(capabilities: ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true }): Promise<InitializeResponse> {
    return this.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: capabilities, clientInfo: { name: "test-editor", version: "1.0.0" } });
  }

  /** The updates of one session, in arrival order. */
  updates(sessionId: string): SessionUpdate[] {
    return this.notifications.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  /** The agent's text of a session, chunks joined (from update index `from`). */
  text(sessionId: string, from = 0): string {
    return this.updates(sessionId)
      .slice(from)
      .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []))
      .join("");
  }

  /** Resolves once `check` holds (re-checked on every update and permission request), or rejects after the bound. */
  waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const listener = (): void => {
        if (!check()) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${what}; updates: ${JSON.stringify(this.notifications).slice(-2000)}; stderr: ${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
      };
      this.listeners.push(listener);
      listener();
    });
  }

  /** Every stdout byte is a JSON-RPC 2.0 message line (the stdout firewall). */
  stdoutViolations(): string[] {
    const problems: string[] = [];
    if (this.stdout !== "" && !this.stdout.endsWith("\n")) problems.push("stdout does not end with a newline");
    for (const line of this.stdout.split("\n").filter((l) => l !== "")) {
      try {
        const message = JSON.parse(line) as Record<string, unknown>;
        if (message.jsonrpc !== "2.0") problems.push(`not JSON-RPC 2.0: ${line.slice(0, 200)}`);
      } catch {
        problems.push(`not JSON: ${line.slice(0, 200)}`);
      }
    }
    return problems;
  }

  /** Ends stdin as an editor closing does; resolves with the exit. */
  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end();
    const exit = await this.exited;
    this.connection.close();
    this.terminals.releaseAll();
    return exit;
  }
}
