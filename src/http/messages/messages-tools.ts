import type { SamplingOverrides, ToolSpec } from "../../engine/chat-types.js";
import { RuntimeError } from "../../shared/runtime-error.js";
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

/** Sampling, stop sequences and tool_choice in engine terms. */
export function toOverrides(request: MessagesRequest, tools: ClientTools): { overrides: SamplingOverrides; warnings: string[] } {
  const overrides: SamplingOverrides = { maxTokens: request.max_tokens };
  const warnings: string[] = [];
  if (request.temperature !== undefined) overrides.temperature = request.temperature;
  if (request.top_p !== undefined) overrides.topP = request.top_p;
  if (request.top_k !== undefined) warnings.push("top_k: not applied by this server (the engines sample with temperature and top_p)");
  const stops = (request.stop_sequences ?? []).filter((stop) => stop !== "");
  if (stops.length > 0) overrides.stop = stops;
  const choice = request.tool_choice;
  if (choice !== undefined) {
    if (choice.disable_parallel_tool_use === true) overrides.parallelToolCalls = false;
    if (choice.type === "auto") overrides.toolChoice = "auto";
    else if (choice.type === "any") overrides.toolChoice = "required";
    else if (choice.type === "none") overrides.toolChoice = "none";
    else {
      const name = choice.name ?? refuse("tool_choice.name", "Field required with type \"tool\"");
      if (!(tools.specs ?? []).some((spec) => spec.name === name)) refuse("tool_choice.name", `names a tool "${name.slice(0, 64)}" that is not in tools`);
      overrides.toolChoice = { name };
    }
  }
  const thinking = request.thinking;
  if (thinking?.type === "enabled" && thinking.budget_tokens !== undefined) {
    warnings.push("thinking.budget_tokens: not enforced by this server (the model thinks within max_tokens)");
  }
  return { overrides, warnings };
}
