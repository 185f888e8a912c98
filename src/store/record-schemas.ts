import { z } from "zod";
import { contentPartSchema } from "../shared/content-part-schema.js";
import type { Checkpoint, HistoryEntry, SessionMeta } from "./store-types.js";

/**
 * Disk is an edge like any other: a file edited by hand, damaged, or written by a future version
 * is checked before it is trusted. The schemas only check; callers keep the parsed value as read
 * (unknown extra keys survive a round trip).
 */

const contentPart = contentPartSchema();
const imagePart = z.object({ type: z.literal("image_url"), image_url: z.object({ url: z.string() }) });

const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

const chatMessage = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.union([z.string(), z.array(contentPart)]), preamble: z.string().optional() }),
  z.object({ role: z.literal("assistant"), content: z.string(), tool_calls: z.array(toolCall).optional() }),
  z.object({ role: z.literal("tool"), tool_call_id: z.string(), name: z.string(), content: z.string(), is_error: z.boolean().optional(), images: z.array(imagePart).optional() }),
]);

const historyEntrySchema = z.object({
  trace_id: z.string(),
  agent: z.string(),
  at: z.string(),
  messages: z.array(chatMessage),
});

const checkpointSchema = z.object({
  version: z.literal(1),
  trace_id: z.string(),
  agent: z.string(),
  user_input: z.string(),
  messages: z.array(chatMessage),
  step: z.number().int().min(0),
  parse_errors: z.number().int().min(0),
  status: z.enum(["running", "paused"]),
  pending: z
    .object({
      call: toolCall,
      args: z.record(z.string(), z.unknown()),
      server: z.string(),
      elicitation: z.object({ server: z.string(), message: z.string(), requested_schema: z.record(z.string(), z.unknown()) }).optional(),
    })
    .nullable(),
  updated_at: z.string(),
});

export function isHistoryEntry(value: unknown): value is HistoryEntry {
  return historyEntrySchema.safeParse(value).success;
}

export function isCheckpoint(value: unknown): value is Checkpoint {
  return checkpointSchema.safeParse(value).success;
}

const sessionMetaSchema = z.object({
  version: z.literal(1),
  cwd: z.string().nullable(),
  title: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  agent: z.string().optional(),
  model: z.string().optional(),
  thinking: z.boolean().optional(),
});

export function isSessionMeta(value: unknown): value is SessionMeta {
  return sessionMetaSchema.safeParse(value).success;
}
