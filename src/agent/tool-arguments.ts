import { z } from "zod";
import type { ToolDescriptor } from "../tools/tool-types.js";

export type ArgumentCheck = { ok: true; args: Record<string, unknown> } | { ok: false; problem: string };

/**
 * A tool call's arguments must be a JSON object that validates against the tool's input schema.
 * Anything else is a salvageable parse failure: the problem text goes back to the model.
 */
export function checkToolArguments(tool: ToolDescriptor, raw: string): ArgumentCheck {
  let value: unknown;
  try {
    value = raw.trim() === "" ? {} : JSON.parse(raw);
  } catch (error) {
    return { ok: false, problem: `the arguments of ${tool.name} are not valid JSON (${(error as Error).message}); send a JSON object` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, problem: `the arguments of ${tool.name} must be a JSON object` };
  }
  const schema = schemaOf(tool);
  if (schema === null) return { ok: true, args: value as Record<string, unknown> };
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, args: value as Record<string, unknown> };
  const issues = result.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(arguments)"}: ${issue.message}`);
  return { ok: false, problem: `the arguments of ${tool.name} do not match its schema: ${issues.join("; ")}` };
}

/** A schema zod cannot convert is not enforced here; the tool server still validates. */
function schemaOf(tool: ToolDescriptor): z.ZodType | null {
  try {
    return z.fromJSONSchema(tool.inputSchema);
  } catch {
    return null;
  }
}
