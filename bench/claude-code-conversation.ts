import { performance } from "node:perf_hooks";
import { parseSse } from "../test/helpers/http-server.js";
import { developerPrompt } from "./codex-conversation.js";

/**
 * A conversation shaped like Claude Code's (what 2.1.328 sends, see issue 20): `system` as text
 * blocks (the billing-header block first, which the server drops), ~20k characters of system
 * text and tool schemas together, a `system` message of environment text inside `messages`,
 * `stream: true`, `thinking: adaptive`, one `x-claude-code-session-id` for the whole session; each
 * step resends the whole conversation with the previous answer and a Bash `tool_use` plus its
 * `tool_result` appended (as a session of tool calls does). The text is generated here
 * (lowercase English-like prose), not Claude Code's own prompt.
 */

const stringParam = (description: string): Record<string, unknown> => ({ type: "string", description });

/** Claude Code's tool names with schemas of its shape; descriptions long enough that system + tools is ~`chars` characters. */
export function claudeCodeTools(descriptionChars: number): unknown[] {
  const names = ["Bash", "Read", "Edit", "Write", "Glob", "Grep", "Agent", "TodoWrite", "WebFetch", "NotebookEdit", "BashOutput", "KillShell"];
  const each = Math.max(200, Math.floor(descriptionChars / names.length));
  return names.map((name, i) => ({
    name,
    description: `${name.toLowerCase()}: ${developerPrompt(each).replaceAll("\n", " ")}`.slice(0, each),
    input_schema: {
      type: "object",
      properties: { command: stringParam(`the input of ${name.toLowerCase()}.`), description: stringParam("what this call does, in a few words."), timeout: { type: "number", description: "milliseconds." } },
      required: ["command"],
      additionalProperties: false,
      $schema: "http://json-schema.org/draft-07/schema#",
    },
    ...(i === names.length - 1 ? { defer_loading: true } : {}),
  }));
}

export interface ConversationStep {
  /** Request written -> first content_block_delta read. */
  ttft_ms: number;
  total_ms: number;
  /** The whole prompt: input_tokens + cache_read_input_tokens (+ cache creation, always 0 here). */
  prompt_tokens: number;
  cache_read_tokens: number;
  output_tokens: number;
}

interface StreamEvent {
  type: string;
  delta?: { type: string; text?: string };
  usage?: { input_tokens?: number | null; cache_read_input_tokens?: number | null; output_tokens: number };
}

/** Runs `steps` Claude Code-shaped requests against serve-http's /v1/messages?beta=true. */
export async function claudeCodeConversation(base: string, options: { model: string; steps: number; sessionId: string; chars: number; maxTokens: number; toolsInSystem?: boolean }): Promise<ConversationStep[]> {
  const systemChars = Math.floor(options.chars * 0.6);
  const system = [
    { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.328.abc; cc_entrypoint=sdk-cli;" },
    { type: "text", text: "you are claude code, a coding agent.", cache_control: { type: "ephemeral" } },
    { type: "text", text: developerPrompt(systemChars), cache_control: { type: "ephemeral" } },
  ];
  const tools = claudeCodeTools(options.chars - systemChars);
  // The same characters as system text instead of offered tools (see messages.bench.ts: llama-server).
  if (options.toolsInSystem === true) system.push({ type: "text", text: JSON.stringify(tools), cache_control: { type: "ephemeral" } });
  const messages: unknown[] = [
    { role: "user", content: [{ type: "text", text: "look at the failing test and fix it." }] },
    { role: "system", content: "<env>\nworking directory: /work/project\nplatform: linux\n</env>" },
  ];
  const results: ConversationStep[] = [];
  for (let step = 1; step <= options.steps; step++) {
    const body = { model: options.model, max_tokens: options.maxTokens, stream: true, system, ...(options.toolsInSystem === true ? {} : { tools }), messages, thinking: { type: "adaptive", display: "omitted" }, metadata: { user_id: '{"session_id":"bench"}' } };
    const sent = performance.now();
    let first = 0;
    const reply = await fetch(`${base}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-claude-code-session-id": options.sessionId },
      body: JSON.stringify(body),
    });
    if (reply.body === null) throw new Error(`step ${step}: no body`);
    let text = "";
    let answer = "";
    const decoder = new TextDecoder();
    for await (const piece of reply.body as AsyncIterable<Uint8Array>) {
      text += decoder.decode(piece, { stream: true });
      if (first === 0 && text.includes("event: content_block_delta")) first = performance.now();
    }
    const done = performance.now();
    if (reply.status !== 200) throw new Error(`step ${step}: HTTP ${reply.status} ${text.slice(-600)}`);
    const events = parseSse(text).map((frame) => JSON.parse(frame.data) as StreamEvent);
    for (const event of events) if (event.delta?.type === "text_delta") answer += event.delta.text ?? "";
    const usage = events.find((event) => event.type === "message_delta")?.usage;
    if (usage === undefined) throw new Error(`step ${step}: no message_delta: ${text.slice(-600)}`);
    const read = usage.cache_read_input_tokens ?? 0;
    results.push({ ttft_ms: (first || done) - sent, total_ms: done - sent, prompt_tokens: (usage.input_tokens ?? 0) + read, cache_read_tokens: read, output_tokens: usage.output_tokens });
    // As a tool-using session does: the answer with a Bash call, then the call's result.
    const id = `toolu_bench_${step}`;
    messages.push({ role: "assistant", content: [...(answer === "" ? [] : [{ type: "text", text: answer }]), { type: "tool_use", id, name: "Bash", input: { command: `ls module${step}` } }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: `module${step}/index.ts\nmodule${step}/index.test.ts`, is_error: false, cache_control: { type: "ephemeral" } }] });
  }
  return results;
}
