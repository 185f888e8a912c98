import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * The required fields of the Messages types of the pinned `@anthropic-ai/sdk`, read from its
 * declaration file (resources/messages/messages.d.ts), so that a test checks our events and
 * objects against what typed clients are promised, not against a copy of it.
 */
export type MessagesTypes = Map<string, string[]>;

export function loadMessagesTypes(): MessagesTypes {
  const require = createRequire(import.meta.url);
  const file = path.join(path.dirname(require.resolve("@anthropic-ai/sdk")), "resources", "messages", "messages.d.ts");
  const source = readFileSync(file, "utf8");
  const interfaces: MessagesTypes = new Map();
  for (const match of source.matchAll(/^export interface (\w+) \{\n([\s\S]*?)\n\}/gm)) {
    const [, name = "", body = ""] = match;
    interfaces.set(name, [...body.matchAll(/^ {4}(\w+): /gm)].map((field) => field[1] ?? ""));
  }
  // RawMessageDeltaEvent.Delta lives in a namespace (8-space fields).
  const delta = /interface Delta \{\n([\s\S]*?)\n {4}\}/.exec(source.slice(source.indexOf("export declare namespace RawMessageDeltaEvent")))?.[1] ?? "";
  interfaces.set("RawMessageDeltaEvent.Delta", [...delta.matchAll(/^ {8}(\w+): /gm)].map((field) => field[1] ?? ""));
  assert.ok(interfaces.has("Message") && interfaces.has("RawMessageStartEvent") && (interfaces.get("RawMessageDeltaEvent.Delta")?.length ?? 0) > 2, `could not read the Messages types from ${file}`);
  return interfaces;
}

const EVENTS: Record<string, string> = {
  message_start: "RawMessageStartEvent",
  message_delta: "RawMessageDeltaEvent",
  message_stop: "RawMessageStopEvent",
  content_block_start: "RawContentBlockStartEvent",
  content_block_delta: "RawContentBlockDeltaEvent",
  content_block_stop: "RawContentBlockStopEvent",
};

const BLOCKS: Record<string, string> = { text: "TextBlock", thinking: "ThinkingBlock", redacted_thinking: "RedactedThinkingBlock", tool_use: "ToolUseBlock" };
const DELTAS: Record<string, string> = { text_delta: "TextDelta", thinking_delta: "ThinkingDelta", signature_delta: "SignatureDelta", input_json_delta: "InputJSONDelta" };

function assertFields(types: MessagesTypes, name: string, value: unknown, where: string): void {
  const required = types.get(name);
  assert.ok(required !== undefined, `no interface ${name}`);
  assert.ok(value !== null && typeof value === "object", `${where}: not an object`);
  for (const field of required) assert.ok(field in value, `${where} (${name}) lacks the required field "${field}": ${JSON.stringify(value).slice(0, 300)}`);
}

function assertTyped(types: MessagesTypes, table: Record<string, string>, value: unknown, where: string): void {
  const type = (value as { type?: string }).type ?? "";
  const name = table[type];
  assert.ok(name !== undefined, `${where}: unexpected type ${type}`);
  assertFields(types, name, value, where);
}

/** A Message and its content blocks have every required field. */
export function assertMessageShape(types: MessagesTypes, message: unknown, where = "message"): void {
  assertFields(types, "Message", message, where);
  assertFields(types, "Usage", (message as { usage: unknown }).usage, `${where}.usage`);
  for (const [index, block] of (message as { content: unknown[] }).content.entries()) assertTyped(types, BLOCKS, block, `${where}.content[${index}]`);
}

/** One streamed event: a type of the SDK's RawMessageStreamEvent (or `ping`) with every required field, and what it carries whole. */
export function assertEventShape(types: MessagesTypes, event: Record<string, unknown>): void {
  const type = String(event.type);
  if (type === "ping") return;
  const name = EVENTS[type];
  assert.ok(name !== undefined, `unknown event type ${type}`);
  assertFields(types, name, event, type);
  if (type === "message_start") assertMessageShape(types, event.message, "message_start.message");
  if (type === "content_block_start") assertTyped(types, BLOCKS, event.content_block, "content_block_start.content_block");
  if (type === "content_block_delta") assertTyped(types, DELTAS, event.delta, "content_block_delta.delta");
  if (type === "message_delta") {
    assertFields(types, "RawMessageDeltaEvent.Delta", event.delta, "message_delta.delta");
    assertFields(types, "MessageDeltaUsage", event.usage, "message_delta.usage");
  }
}
