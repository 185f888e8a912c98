import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * The required fields of the Responses types of the pinned `openai` package, read from its
 * declaration file (resources/responses/responses.d.ts), so that a test checks our events and
 * objects against what typed clients are promised, not against a copy of it.
 */
export interface ResponsesTypes {
  /** Event `type` literal -> the event interface's required fields. */
  events: Map<string, string[]>;
  /** Interface name -> required fields. */
  interfaces: Map<string, string[]>;
}

export function loadResponsesTypes(): ResponsesTypes {
  const require = createRequire(import.meta.url);
  const file = path.join(path.dirname(require.resolve("openai")), "resources", "responses", "responses.d.ts");
  const source = readFileSync(file, "utf8");
  const interfaces = new Map<string, string[]>();
  const events = new Map<string, string[]>();
  for (const match of source.matchAll(/^export interface (\w+) \{\n([\s\S]*?)\n\}/gm)) {
    const [, name = "", body = ""] = match;
    const required = [...body.matchAll(/^ {4}(\w+): /gm)].map((field) => field[1] ?? "");
    interfaces.set(name, required);
    const type = /^ {4}type: '(response\.[\w.]+|error)';/m.exec(body)?.[1];
    if (type !== undefined) events.set(type, required);
  }
  // Items declared inside a namespace (ResponseOutputItem.McpCall...): the first declaration of a name.
  for (const match of source.matchAll(/^ {4}interface (\w+) \{\n([\s\S]*?)\n {4}\}/gm)) {
    const [, name = "", body = ""] = match;
    if (!interfaces.has(name)) interfaces.set(name, [...body.matchAll(/^ {8}(\w+): /gm)].map((field) => field[1] ?? ""));
  }
  assert.ok(events.size > 40 && interfaces.has("Response") && interfaces.has("McpCall"), `could not read the Responses types from ${file}`);
  return { events, interfaces };
}

/** The interface an output item or content part of ours must satisfy, by its `type`. */
const ITEM_INTERFACES: Record<string, string> = {
  message: "ResponseOutputMessage",
  reasoning: "ResponseReasoningItem",
  function_call: "ResponseFunctionToolCall",
  output_text: "ResponseOutputText",
  mcp_list_tools: "McpListTools",
  mcp_call: "McpCall",
  mcp_approval_request: "McpApprovalRequest",
};

function assertFields(types: ResponsesTypes, name: string, value: unknown, where: string): void {
  const required = types.interfaces.get(name);
  assert.ok(required !== undefined, `no interface ${name}`);
  assert.ok(value !== null && typeof value === "object", `${where}: not an object`);
  for (const field of required) assert.ok(field in value, `${where} (${name}) lacks the required field "${field}": ${JSON.stringify(value).slice(0, 300)}`);
}

/** A Response object and its output items (and their text parts) have every required field. */
export function assertResponseShape(types: ResponsesTypes, response: unknown, where = "response"): void {
  assertFields(types, "Response", response, where);
  if (types.interfaces.get("ResponseUsage") !== undefined && (response as { usage?: unknown }).usage != null) assertFields(types, "ResponseUsage", (response as { usage: unknown }).usage, `${where}.usage`);
  for (const [index, item] of ((response as { output: unknown[] }).output ?? []).entries()) assertItemShape(types, item, `${where}.output[${index}]`);
}

export function assertItemShape(types: ResponsesTypes, item: unknown, where: string): void {
  const type = (item as { type?: string }).type ?? "";
  const name = ITEM_INTERFACES[type];
  assert.ok(name !== undefined, `${where}: unexpected item type ${type}`);
  assertFields(types, name, item, where);
  for (const [index, part] of ((item as { content?: unknown[] }).content ?? []).entries()) {
    const partType = (part as { type?: string }).type;
    if (partType === "output_text") assertFields(types, "ResponseOutputText", part, `${where}.content[${index}]`);
    else assert.equal(partType, "reasoning_text", `${where}.content[${index}]`);
  }
}

/** One streamed event: a known type with every required field, and the objects inside it whole. */
export function assertEventShape(types: ResponsesTypes, event: Record<string, unknown>): void {
  const type = String(event.type);
  const required = types.events.get(type);
  assert.ok(required !== undefined, `unknown event type ${type}`);
  for (const field of required) assert.ok(field in event, `${type} lacks the required field "${field}": ${JSON.stringify(event).slice(0, 300)}`);
  if ("response" in event) assertResponseShape(types, event.response, `${type}.response`);
  if ("item" in event) assertItemShape(types, event.item, `${type}.item`);
}
