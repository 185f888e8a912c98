import type { ChatModelFunctions, GbnfJsonSchema } from "node-llama-cpp";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";

/**
 * Tool specs to node-llama-cpp functions. node-llama-cpp turns each params schema into a grammar,
 * so the arguments it generates always parse and match the schema. An object schema with no
 * properties is passed as no params.
 */
export function toChatFunctions(tools: readonly ToolSpec[]): ChatModelFunctions {
  const functions: Record<string, ChatModelFunctions[string]> = {};
  for (const tool of tools) {
    const properties = tool.parameters.properties;
    const hasParams = typeof properties === "object" && properties !== null && Object.keys(properties).length > 0;
    functions[tool.name] = {
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(hasParams ? { params: stripUnsupported(tool.parameters) as GbnfJsonSchema } : {}),
    };
  }
  return functions;
}

/** JSON Schema keywords node-llama-cpp's grammar builder does not use; dropping them avoids surprises. */
const UNSUPPORTED: ReadonlySet<string> = new Set(["$schema", "$id", "additionalProperties", "default", "examples", "title"]);

export function stripUnsupported(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripUnsupported);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (UNSUPPORTED.has(key)) continue;
    out[key] = key === "properties" && value !== null && typeof value === "object"
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, stripUnsupported(sub)]))
      : stripUnsupported(value);
  }
  return out;
}
