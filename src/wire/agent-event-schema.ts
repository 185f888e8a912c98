import { z } from "zod";
import type { AgentEvent } from "../agent/events.js";

/**
 * The AgentEvent union as data: what `toEventFields` sends on every wire that carries AgentEvents
 * (stdio v1 events, JSON-RPC `$/event` params, the HTTP opt-in event stream). The JSON Schema in
 * schema/ is generated from it, and the type check below makes a change to `AgentEvent` that is
 * not made here a compile error. Never imported on a request path (zod is loaded lazily there).
 */

const step = z.number().int().nonnegative();
const count = z.number().int().nonnegative();

export const agentEventSchemas = [
  z.strictObject({ event: z.literal("run_start"), user_input: z.string(), trace_id: z.string(), session_id: z.string().nullable(), agent: z.string() }),
  z.strictObject({ event: z.literal("memory_start"), snippets: count }),
  z.strictObject({ event: z.literal("llm_start"), step }),
  z.strictObject({ event: z.literal("prompt_progress"), step, processed: count, total: count, cached: count }),
  z.strictObject({ event: z.literal("llm_chunk"), step, delta: z.string() }),
  z.strictObject({ event: z.literal("thinking_chunk"), step, delta: z.string() }),
  z.strictObject({ event: z.literal("llm_done"), step }),
  z.strictObject({ event: z.literal("tool_start"), step, tool: z.string(), args: z.unknown() }),
  z.strictObject({ event: z.literal("tool_progress"), step, tool: z.string(), progress: z.number(), total: z.number().optional(), message: z.string().optional() }),
  z.strictObject({
    event: z.literal("tool_done"),
    step,
    tool: z.string(),
    status: z.enum(["ok", "error", "timeout", "denied", "approval_required", "cancelled"]),
    preview: z.string(),
    retryable: z.boolean(),
    ms: z.number().nonnegative(),
  }),
  z.strictObject({ event: z.literal("usage"), step, input_tokens: count, output_tokens: count, cached_input_tokens: count.optional(), prompt_ms: count.optional() }),
  z.strictObject({ event: z.literal("final"), step, response: z.string() }),
  z.strictObject({ event: z.literal("loop_abort"), step, reason: z.enum(["max_steps", "parse_errors"]) }),
  z.strictObject({
    event: z.literal("model_load"),
    step,
    model: z.string(),
    state: z.enum(["queued", "loading", "loaded"]),
    progress: z.number().min(0).max(1).optional(),
    unloading: z.array(z.string()).optional(),
  }),
  z.strictObject({ event: z.literal("tools_changed"), step, server: z.string(), tools: z.array(z.string()) }),
  z.strictObject({ event: z.literal("elicitation_request"), step, server: z.string(), message: z.string(), requested_schema: z.record(z.string(), z.unknown()) }),
] as const;

export const agentEventSchema = z.discriminatedUnion("event", agentEventSchemas);

/** An AgentEvent as the wire carries it, discriminated on `event`. */
export type AgentEventWire = z.output<typeof agentEventSchema>;

// Both directions: the schema accepts every AgentEvent, and describes nothing AgentEvent lacks.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agentEventSchemaMatchesTheUnion: Same<AgentEventWire, AgentEvent> = true;
void agentEventSchemaMatchesTheUnion;
