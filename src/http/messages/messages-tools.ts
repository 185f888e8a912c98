import type { SamplingOverrides, ToolChoice } from "../../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { toSamplingOverrides } from "../turn/sampling-overrides.js";
import type { MessagesRequest } from "./messages-schema.js";

export interface ClientTools {
  /** undefined: the request brought no client tools (the agent's own tools run inside the turn). */
  specs: ToolSpec[] | undefined;
  warnings: string[];
}

const refuse = (param: string, message: string): never => {
  throw new RuntimeError("invalid_request", `${param}: ${message}`, { details: { param } });
};

/**
 * Client tools (no `type`, or `custom`) are offered to the model with their `input_schema`;
 * `defer_loading`, `cache_control` and `strict` are accepted and change nothing here. Anthropic
 * server tools (`web_search_*`, `bash_*`, `text_editor_*`, `code_execution_*`, ...) run on
 * Anthropic's side: skipped, each named in the warnings, never a 400.
 */
export function toClientTools(request: MessagesRequest): ClientTools {
  const specs: ToolSpec[] = [];
  const warnings: string[] = [];
  const names = new Set<string>();
  for (const [index, tool] of (request.tools ?? []).entries()) {
    const at = `tools.${index}`;
    if (tool.type != null && tool.type !== "custom") {
      warnings.push(`${at}: server tool type "${tool.type.slice(0, 64)}" is not served by this server; skipped`);
      continue;
    }
    const schema = tool.input_schema;
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) refuse(`${at}.input_schema`, "Field required (a JSON Schema object)");
    if (names.has(tool.name)) refuse(`${at}.name`, `the tool name "${tool.name.slice(0, 64)}" is given twice`);
    names.add(tool.name);
    const description = typeof tool.description === "string" ? tool.description : undefined;
    specs.push({ name: tool.name, ...(description === undefined ? {} : { description }), parameters: schema as Record<string, unknown> });
  }
  return { specs: specs.length > 0 ? specs : undefined, warnings };
}

/**
 * Sampling, stop sequences, tool_choice and thinking in engine terms, read by the one shared
 * mapping (sampling-overrides.ts). `thinking: disabled` asks for no reasoning (llama-server turns
 * the template's thinking off, the openai engine sends `reasoning_effort: "none"`, the embedded
 * engine has no switch and says so). `output_config.effort` is not passed on: an upstream without
 * reasoning would refuse the field, and Claude Code sends it on every request.
 */
export function toOverrides(request: MessagesRequest, tools: ClientTools): { overrides: SamplingOverrides; warnings: string[] } {
  const warnings: string[] = [];
  const choice = request.tool_choice;
  let toolChoice: ToolChoice | undefined;
  if (choice !== undefined) {
    if (choice.type === "auto") toolChoice = "auto";
    else if (choice.type === "any") toolChoice = "required";
    else if (choice.type === "none") toolChoice = "none";
    else {
      const name = choice.name ?? refuse("tool_choice.name", "Field required with type \"tool\"");
      if (!(tools.specs ?? []).some((spec) => spec.name === name)) refuse("tool_choice.name", `names a tool "${name.slice(0, 64)}" that is not in tools`);
      toolChoice = { name };
    }
  }
  const thinking = request.thinking;
  if (thinking?.type === "enabled" && thinking.budget_tokens !== undefined) {
    warnings.push("thinking.budget_tokens: not enforced by this server (the model thinks within max_tokens)");
  }
  const overrides = toSamplingOverrides({
    temperature: request.temperature,
    top_p: request.top_p,
    max_tokens: request.max_tokens,
    stop: request.stop_sequences,
    parallel_tool_calls: choice?.disable_parallel_tool_use === true ? false : undefined,
    tool_choice: toolChoice,
    reasoning_effort: thinking?.type === "disabled" ? "none" : undefined,
  });
  if (request.top_k !== undefined) overrides.topK = request.top_k;
  return { overrides, warnings };
}
