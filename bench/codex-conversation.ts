import { performance } from "node:perf_hooks";
import type { Agent } from "node:http";
import { parseSse } from "../test/helpers/http-server.js";
import { send } from "./http-turns.js";

/**
 * A conversation shaped like Codex CLI's (what 0.169.0 sends, see issue 19): a ~17k-character
 * developer prompt, a developer permissions note, the environment context, function tools plus a
 * tool type we skip (web_search), `store: false` so every request resends the whole conversation
 * with the previous answers appended, and one `prompt_cache_key` for the session. The text is
 * generated here (lowercase English-like prose, ~3-4 characters per token of the bench vocab),
 * not Codex's own prompt.
 */

const GUIDELINES = [
  "read the surrounding code before you change a file and keep the existing style",
  "prefer small focused changes that a reviewer can follow in one sitting",
  "run the tests that cover the code you touched and report what they printed",
  "never discard work in the tree that you did not make yourself",
  "explain in one or two sentences what you changed and why before the details",
  "use the shell tool for searching files and reading them rather than guessing",
  "when a command fails read its output and fix the cause instead of retrying blindly",
  "ask before running anything that needs the network or writes outside the workspace",
  "keep answers short and plain and put file paths and commands in backticks",
  "when the task is unclear state the assumption you made and continue with it",
  "do not add comments that repeat what the code already says",
  "split long functions only when it makes the change easier to review",
];

/** Lowercase prose of about `chars` characters: numbered working rules, deterministic. */
export function developerPrompt(chars = 17_000): string {
  const lines = ["you are a coding agent running in a terminal on the user's machine, working in the current repository."];
  let length = lines[0]!.length;
  for (let i = 0; length < chars; i++) {
    const line = `${i + 1}. while working on a task, ${GUIDELINES[i % GUIDELINES.length]}, and ${GUIDELINES[(i * 7 + 3) % GUIDELINES.length]}.`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n");
}

const stringParam = (description: string): Record<string, unknown> => ({ type: "string", description });

/** Function tools shaped like Codex's (names, a few parameters, `strict: false`) plus web_search, which the server skips. */
export const CODEX_TOOLS: unknown[] = [
  {
    type: "function",
    name: "exec_command",
    description: "runs a command in a pty, returning output or a session id for ongoing interaction.",
    strict: false,
    parameters: { type: "object", properties: { cmd: stringParam("shell command to execute."), workdir: stringParam("the working directory."), yield_time_ms: { type: "number", description: "how long to wait for output." } }, required: ["cmd"], additionalProperties: false },
  },
  {
    type: "function",
    name: "write_stdin",
    description: "writes characters to an existing exec session and returns recent output.",
    strict: false,
    parameters: { type: "object", properties: { session_id: { type: "number", description: "the session id." }, chars: stringParam("bytes to write to stdin.") }, required: ["session_id"], additionalProperties: false },
  },
  {
    type: "function",
    name: "view_image",
    description: "view a local image from the filesystem.",
    strict: false,
    parameters: { type: "object", properties: { path: stringParam("local filesystem path to an image file.") }, required: ["path"], additionalProperties: false },
  },
  { type: "web_search", external_web_access: false },
];

export interface ConversationTurn {
  /** Request written -> first output delta read. */
  ttft_ms: number;
  total_ms: number;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  status: string;
}

interface StreamEvent {
  type: string;
  item?: { type: string; call_id?: string; content?: Array<{ type: string; text?: string }> } & Record<string, unknown>;
  response?: { status: string; usage?: { input_tokens: number; output_tokens: number; input_tokens_details?: { cached_tokens?: number } } };
}

/**
 * Runs `turns` Codex-shaped requests against serve-http's /v1/responses, each resending the whole
 * conversation (store: false) with the previous output items appended and a new user message.
 */
export async function codexConversation(agent: Agent, port: number, options: { model: string; turns: number; cacheKey: string; prompt?: string }): Promise<ConversationTurn[]> {
  const input: unknown[] = [
    { type: "message", role: "developer", content: [{ type: "input_text", text: options.prompt ?? developerPrompt() }] },
    { type: "message", role: "developer", content: [{ type: "input_text", text: "<permissions instructions>\nfilesystem sandboxing: workspace write. approvals: never.\n</permissions instructions>" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>\n  <cwd>/work/project</cwd>\n  <shell>bash</shell>\n</environment_context>" }] },
  ];
  const turns: ConversationTurn[] = [];
  for (let turn = 1; turn <= options.turns; turn++) {
    input.push({ type: "message", role: "user", content: [{ type: "input_text", text: `step ${turn}: look at the failing test in module ${turn} and tell me what to change.` }] });
    const body = {
      model: options.model,
      input,
      tools: CODEX_TOOLS,
      tool_choice: "auto",
      parallel_tool_calls: true,
      reasoning: { summary: "auto" },
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: options.cacheKey,
    };
    let partial = "";
    let first = 0;
    const events: StreamEvent[] = [];
    const sent = performance.now();
    const result = await send(agent, port, "POST", "/v1/responses", body, (piece, at) => {
      const blocks = (partial + piece).split("\n\n");
      partial = blocks.pop() ?? "";
      for (const frame of parseSse(blocks.join("\n\n") + "\n\n")) {
        const event = JSON.parse(frame.data) as StreamEvent;
        if (first === 0 && event.type.endsWith(".delta")) first = at;
        events.push(event);
      }
    });
    const done = performance.now();
    const end = events.at(-1);
    if (result.status !== 200 || end?.response?.usage === undefined) throw new Error(`turn ${turn}: HTTP ${result.status} ${result.body.slice(-600)}`);
    const usage = end.response.usage;
    turns.push({ ttft_ms: first - sent, total_ms: done - sent, input_tokens: usage.input_tokens, cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0, output_tokens: usage.output_tokens, status: end.response.status });
    // As Codex does: the output items go back into the next request (a call with its output).
    for (const event of events) {
      if (event.type !== "response.output_item.done" || event.item === undefined) continue;
      input.push(event.item);
      if (event.item.type === "function_call") input.push({ type: "function_call_output", call_id: event.item.call_id, output: "ok" });
    }
  }
  return turns;
}
