import { z } from "zod";
import type { PodEvent, PodMethodMessage } from "./pod-event-types.js";

/**
 * The Pod protocol (seed 004) as zod schemas: the request table the pod validates lines with
 * (pod-request.ts) and the events it sends. The JSON Schema in schema/pod.schema.json is generated
 * from these; the type check below keeps the events and `PodEvent` the same shape.
 */

export const podEnvelope = z.object({ method: z.string(), params: z.record(z.string(), z.unknown()).optional() });

const noParams = z.record(z.string(), z.unknown());

/** Each method's params; `params` may be omitted where a method takes none. Keys are the methods. */
export const podRequestParams = {
  run: z.object({ input: z.string().min(1) }),
  resume: noParams,
  cancel: noParams,
  get_status: noParams,
  get_history: noParams,
} as const;

export type PodMethod = keyof typeof podRequestParams;

const id = z.string();
const text = z.strictObject({ text: z.string() });
const pendingCall = z.strictObject({ id, name: z.string(), arguments: z.string() });

export const podEventSchemas = [
  z.strictObject({ event: z.literal("turn_start"), data: z.strictObject({ turn: z.number().int() }) }),
  z.strictObject({
    event: z.literal("turn_end"),
    data: z.strictObject({ turn: z.number().int(), result: z.enum(["finished", "paused"]), reason: z.enum(["cancelled", "error"]).optional() }),
  }),
  z.strictObject({ event: z.literal("text_delta"), data: text }),
  z.strictObject({ event: z.literal("text_done"), data: text }),
  z.strictObject({ event: z.literal("thinking_delta"), data: text }),
  z.strictObject({ event: z.literal("thinking_done"), data: text }),
  z.strictObject({ event: z.literal("tool_call_start"), data: z.strictObject({ id, name: z.string() }) }),
  z.strictObject({ event: z.literal("tool_call_args_delta"), data: z.strictObject({ id, json: z.string() }) }),
  z.strictObject({ event: z.literal("tool_call_done"), data: pendingCall }),
  z.strictObject({ event: z.literal("tool_result"), data: z.strictObject({ id, output: z.string(), is_error: z.boolean() }) }),
  z.strictObject({
    event: z.literal("status"),
    data: z.strictObject({ state: z.enum(["idle", "running", "paused"]), session_id: z.string(), pod_name: z.string(), pending: pendingCall.optional() }),
  }),
  z.strictObject({ event: z.literal("history"), data: z.strictObject({ items: z.array(z.unknown()) }) }),
  z.strictObject({ event: z.literal("usage"), data: z.strictObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }) }),
  z.strictObject({
    event: z.literal("error"),
    data: z.strictObject({
      code: z.enum(["already_running", "not_running", "not_paused", "provider_error", "tool_error", "internal"]),
      message: z.string(),
      reason: z.string().optional(),
    }),
  }),
] as const;

export const podEventSchema = z.discriminatedUnion("event", podEventSchemas);

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const podEventSchemaMatchesTheUnion: Same<z.output<typeof podEventSchema>, PodEvent> = true;
void podEventSchemaMatchesTheUnion;

/** The method messages as the schemas accept them, kept the same shape as `PodMethodMessage`. */
type SchemaMethodMessage = { [M in PodMethod]: M extends "run" ? { method: M; params: z.input<(typeof podRequestParams)[M]> } : { method: M; params?: z.input<(typeof podRequestParams)[M]> } }[PodMethod];
const podMethodMessageMatchesTheSchemas: Same<SchemaMethodMessage, PodMethodMessage> = true;
void podMethodMessageMatchesTheSchemas;
