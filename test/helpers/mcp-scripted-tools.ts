import { delay } from "../../src/shared/abort.js";
import { matchTools } from "../../src/tools/tool-glob.js";
import { unknownToolResult } from "../../src/tools/tool-results.js";
import type { ToolCallResult, ToolDescriptor, ToolProvider } from "../../src/tools/tool-types.js";

/**
 * An in-memory ToolProvider for unit tests of the agent loop and the front doors: canned tools,
 * canned results, delays that honour the AbortSignal, timeouts and failures, and a record of
 * every call. It uses the real glob matcher, so `list(patterns)` behaves like McpToolProvider's.
 * Tests of MCP itself use real servers (test/e2e/mcp-*.test.ts).
 */

export interface ScriptedReply {
  status?: ToolCallResult["status"];
  content?: string;
  /** Default: true for timeout, false otherwise (as McpToolProvider does). */
  retryable?: boolean;
  /** Waits this long first; an abort meanwhile gives status cancelled. */
  delayMs?: number;
  /** `call` rejects with this: a broken provider, which the real one never is. */
  throws?: Error;
}

export type ScriptedResponder =
  | ScriptedReply
  | ((args: Record<string, unknown>, context: { index: number; signal: AbortSignal | undefined }) => ScriptedReply | Promise<ScriptedReply>);

export interface ScriptedTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  server?: string;
  remoteName?: string;
  requiresApproval?: boolean;
  /** One responder for every call, or one per call in order (the last one repeats). Default: ok, "". */
  replies?: ScriptedResponder | ScriptedResponder[];
  /** A reply slower than this becomes status timeout, as a server's timeout_ms would. */
  timeoutMs?: number;
}

export interface ScriptedCall {
  name: string;
  args: Record<string, unknown>;
  result?: ToolCallResult;
}

export interface ScriptedProviderOptions {
  startDelayMs?: number;
  /** start() rejects with this (the real provider never rejects for a server failure). */
  startError?: Error;
}

export class ScriptedToolProvider implements ToolProvider {
  readonly calls: ScriptedCall[] = [];
  startCount = 0;
  closed = false;
  private readonly descriptors: ToolDescriptor[];
  private readonly tools = new Map<string, ScriptedTool>();
  private starting: Promise<void> | undefined;

  constructor(tools: readonly ScriptedTool[], private readonly options: ScriptedProviderOptions = {}) {
    this.descriptors = tools.map((tool) => ({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: tool.inputSchema ?? { type: "object", properties: {} },
      server: tool.server ?? "scripted",
      remoteName: tool.remoteName ?? tool.name,
      requiresApproval: tool.requiresApproval ?? false,
    }));
    for (const tool of tools) this.tools.set(tool.name, tool);
  }

  start(signal?: AbortSignal): Promise<void> {
    this.starting ??= (async () => {
      this.startCount++;
      if (this.options.startDelayMs !== undefined) await delay(this.options.startDelayMs, signal);
      if (this.options.startError !== undefined) throw this.options.startError;
    })();
    return this.starting;
  }

  list(patterns: readonly string[]): ToolDescriptor[] {
    return matchTools(this.descriptors, patterns).tools;
  }

  /** Calls made to one tool, in order. */
  callsTo(name: string): ScriptedCall[] {
    return this.calls.filter((call) => call.name === name);
  }

  async call(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolCallResult> {
    const record: ScriptedCall = { name, args };
    this.calls.push(record);
    const tool = this.tools.get(name);
    const result = this.closed
      ? { status: "error" as const, content: "the tool provider is closed", retryable: false }
      : tool === undefined
        ? unknownToolResult(name, [...this.tools.keys()])
        : await this.run(tool, args, options.signal);
    record.result = result;
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async run(tool: ScriptedTool, args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<ToolCallResult> {
    const index = this.callsTo(tool.name).length - 1;
    const responders = Array.isArray(tool.replies) ? tool.replies : [tool.replies ?? {}];
    const responder = responders[Math.min(index, responders.length - 1)] ?? {};
    if (signal?.aborted === true) return { status: "cancelled", content: "the tool call was cancelled", retryable: false };
    const reply = typeof responder === "function" ? await responder(args, { index, signal }) : responder;
    if (reply.delayMs !== undefined) {
      const wait = tool.timeoutMs === undefined ? reply.delayMs : Math.min(reply.delayMs, tool.timeoutMs);
      try {
        await delay(wait, signal);
      } catch {
        return { status: "cancelled", content: "the tool call was cancelled", retryable: false };
      }
      if (tool.timeoutMs !== undefined && reply.delayMs > tool.timeoutMs) {
        return { status: "timeout", content: `tool "${tool.name}" did not finish within ${tool.timeoutMs} ms and was cancelled`, retryable: true };
      }
    }
    if (reply.throws !== undefined) throw reply.throws;
    const status = reply.status ?? "ok";
    return { status, content: reply.content ?? "", retryable: reply.retryable ?? status === "timeout" };
  }
}
