import type { ToolCallResult } from "./tool-types.js";

/**
 * The non-ok results, worded for the model (it reads `content` to decide what to do next).
 * `retryable` says whether the same call may succeed later: a timeout or a crashed server may,
 * a bad argument or an unknown tool will not.
 */

export function cancelledResult(): ToolCallResult {
  return { status: "cancelled", content: "the tool call was cancelled", retryable: false };
}

export function timeoutResult(tool: string, ms: number): ToolCallResult {
  return { status: "timeout", content: `tool "${tool}" did not finish within ${ms} ms and was cancelled`, retryable: true };
}

export function errorResult(content: string, retryable: boolean): ToolCallResult {
  return { status: "error", content, retryable };
}

export function unknownToolResult(name: string, known: readonly string[]): ToolCallResult {
  const shown = known.slice(0, 20).join(", ");
  const more = known.length > 20 ? `, and ${known.length - 20} more` : "";
  const hint = known.length === 0 ? "no tools are available" : `available tools: ${shown}${more}`;
  return errorResult(`unknown tool "${name}"; ${hint}`, false);
}
