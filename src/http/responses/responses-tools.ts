import type { ToolChoice } from "../../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { IndexedItem } from "./input-mapping.js";
import { functionToolSchema, namespaceToolSchema, type FunctionTool, type ResponsesRequest } from "./responses-schema.js";

/** The client's tools as the model is offered them, and how a call's name maps back. */
export interface ClientToolSet {
  /** undefined: the request brought no function tools (the agent's own tools run inside the turn). */
  specs: ToolSpec[] | undefined;
  /** Offered name -> the namespace and name the client knows the function by. */
  namespaced: Map<string, { namespace: string; name: string }>;
  warnings: string[];
}

const toSpec = (tool: FunctionTool, offeredName = tool.name): ToolSpec => ({
  name: offeredName,
  ...(tool.description == null ? {} : { description: tool.description }),
  parameters: tool.parameters ?? { type: "object", properties: {} },
});

const refuse = (param: string, message: string): never => {
  throw new RuntimeError("invalid_request", `${param}: ${message}`, { details: { param } });
};

function parseFunction(raw: unknown, param: string): FunctionTool {
  const parsed = functionToolSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return refuse(`${param}${(issue?.path ?? []).map((key) => `.${String(key)}`).join("")}`, issue?.message ?? "invalid function tool");
}

/** A tool as the request gave it, and where (`tools[2]`, `input[0].tools[1]`) for warnings and refusals. */
export interface ToolEntry {
  raw: { type: string } & Record<string, unknown>;
  param: string;
}

/** The request's `tools`, then those of its `additional_tools` input items, where Codex puts them for its own models. */
export function toolEntries(request: ResponsesRequest, items: readonly IndexedItem[]): ToolEntry[] {
  const entries: ToolEntry[] = (request.tools ?? []).map((raw, index) => ({ raw, param: `tools[${index}]` }));
  for (const { index, item } of items) {
    if (item.type !== "additional_tools") continue;
    for (const [inner, raw] of item.tools.entries()) entries.push({ raw, param: `input[${index}].tools[${inner}]` });
  }
  return entries;
}

/**
 * `function` tools are client tools, as `tools` in chat completions. A `namespace` tool offers
 * its functions; a function is offered under its own name, or `<namespace>__<name>` where that
 * name is taken, and a call of it comes back with `namespace` set. `mcp` tools run inside the
 * turn (request-mcp-tools.ts). Every other tool type (hosted tools, custom, local_shell...) is
 * skipped and named in the warnings, never refused.
 */
export function toClientToolSet(entries: readonly ToolEntry[]): ClientToolSet {
  const specs: ToolSpec[] = [];
  const namespaced = new Map<string, { namespace: string; name: string }>();
  const warnings: string[] = [];
  const taken = new Set<string>();
  const pendingNamespaced: Array<{ tool: FunctionTool; namespace: string }> = [];
  for (const { raw, param } of entries) {
    if (raw.type === "function") {
      const tool = parseFunction(raw, param);
      if (taken.has(tool.name)) refuse(`${param}.name`, `the function name "${tool.name}" is given twice`);
      taken.add(tool.name);
      specs.push(toSpec(tool));
    } else if (raw.type === "namespace") {
      const parsed = namespaceToolSchema.safeParse(raw);
      if (!parsed.success) refuse(param, parsed.error.issues[0]?.message ?? "invalid namespace tool");
      const ns = parsed.data!;
      for (const [inner, member] of ns.tools.entries()) {
        const type = (member as { type?: unknown } | null)?.type;
        if (type !== "function") {
          warnings.push(`${param}.tools[${inner}]: tool type ${JSON.stringify(type)} is not supported by this server; skipped`);
          continue;
        }
        pendingNamespaced.push({ tool: parseFunction(member, `${param}.tools[${inner}]`), namespace: ns.name });
      }
    } else if (raw.type !== "mcp") {
      // mcp tools run here (mcp-tool-request.ts, request-mcp-tools.ts).
      warnings.push(`${param}: tool type "${raw.type.slice(0, 64)}" is not supported by this server; skipped`);
    }
  }
  // Namespaced functions after the plain ones: a plain function keeps its own name.
  for (const { tool, namespace } of pendingNamespaced) {
    const offered = taken.has(tool.name) ? `${namespace}__${tool.name}`.slice(0, 64) : tool.name;
    if (taken.has(offered)) {
      warnings.push(`tools: the function "${tool.name}" of namespace "${namespace}" clashes with another function; skipped`);
      continue;
    }
    taken.add(offered);
    namespaced.set(offered, { namespace, name: tool.name });
    specs.push(toSpec(tool, offered));
  }
  return { specs: specs.length > 0 ? specs : undefined, namespaced, warnings };
}

/** `tool_choice` in engine terms; choices we cannot map (hosted tools, allowed_tools) read as "auto" with a warning. */
export function toToolChoice(request: ResponsesRequest, tools: ClientToolSet): { choice?: ToolChoice; warnings: string[] } {
  const choice = request.tool_choice;
  if (choice == null) return { warnings: [] };
  if (typeof choice === "string") return { choice, warnings: [] };
  if (choice.type === "function" && typeof choice.name === "string") {
    const name = choice.name;
    const offered = (tools.specs ?? []).some((spec) => spec.name === name && !tools.namespaced.has(spec.name)) ? name : [...tools.namespaced].find(([, target]) => target.name === name)?.[0];
    if (offered === undefined) refuse("tool_choice", `names a function "${name}" that is not in tools`);
    return { choice: { name: offered! }, warnings: [] };
  }
  return { warnings: [`tool_choice of type "${String(choice.type).slice(0, 64)}" is not supported by this server; read as "auto"`] };
}
