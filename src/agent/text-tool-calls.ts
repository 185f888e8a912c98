import { randomBytes } from "node:crypto";

/**
 * The documented text fallback for models without native tool calling (docs/agent.md): a call is
 * `<tool_call>{"name": "...", "arguments": {...}}</tool_call>` in the answer text (Hermes/Qwen
 * style). Used only when the engine returned no native calls.
 */
const BLOCK = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;

export interface TextToolCall {
  id: string;
  /** Empty when the block could not be read; `error` then says why. */
  name: string;
  arguments: string;
  error?: string;
}

export function extractTextToolCalls(text: string): { calls: TextToolCall[]; rest: string } {
  const calls: TextToolCall[] = [];
  for (const match of text.matchAll(BLOCK)) {
    const id = `call_${randomBytes(6).toString("hex")}`;
    const body = match[1] ?? "";
    try {
      const parsed = JSON.parse(body) as { name?: unknown; arguments?: unknown };
      if (typeof parsed.name !== "string" || parsed.name === "") {
        calls.push({ id, name: "", arguments: body, error: 'the tool call has no "name"' });
        continue;
      }
      const args = typeof parsed.arguments === "string" ? parsed.arguments : JSON.stringify(parsed.arguments ?? {});
      calls.push({ id, name: parsed.name, arguments: args });
    } catch (error) {
      calls.push({ id, name: "", arguments: body, error: `the tool call is not valid JSON: ${(error as Error).message}` });
    }
  }
  return { calls, rest: calls.length === 0 ? text : text.replace(BLOCK, "").trim() };
}
