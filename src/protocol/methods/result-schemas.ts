import { z } from "zod";
import { doctorReportSchema } from "../../diagnostics/doctor-report-schema.js";
import { planReportJsonSchema } from "../../engine/plan/plan-report-schema.js";
import { agentEventSchema } from "../../wire/agent-event-schema.js";
import { ENGINE_KINDS } from "../../config/engine-kinds.js";

/**
 * What each stdio method answers and streams, as zod schemas. Each method names its own in the
 * method table (`MethodDefinition.result` / `.events`), the handler's return type is checked
 * against it, and the JSON Schema in schema/ is generated from them (scripts/write-json-schema.ts).
 * Like params-schemas.ts, imported only when a schema is wanted, never on a request path.
 */

const ok = z.literal("ok");

export const initializeResult = z.strictObject({
  protocol_version: z.number().int(),
  capabilities: z.strictObject({
    parallel_chat: z.boolean(),
    targeted_cancel: z.boolean(),
    /** Exactly the methods this build answers. */
    methods: z.array(z.string()),
    max_line_bytes: z.number().int().positive(),
    wire: z.enum(["v1", "jsonrpc"]),
    /** JSON-RPC only: the notification names for events and cancellation. */
    event_notification: z.string().optional(),
    cancel_notification: z.string().optional(),
  }),
  server: z.strictObject({ name: z.string(), version: z.string() }),
});

export const statusResult = z.strictObject({ status: ok });

export const doctorResult = doctorReportSchema;

export const planResult = planReportJsonSchema;

export const chatResult = z.strictObject({
  response: z.string(),
  session_id: z.string(),
  trace_id: z.string(),
  warnings: z.array(z.string()),
  /** Present when the turn paused on a tool that needs approval (resume with `resume: true`). */
  pending_approval: z.strictObject({ tool: z.string(), args: z.record(z.string(), z.unknown()) }).optional(),
  /** Present when the turn paused on an MCP server's question (answer with `resume: true, elicitation`). */
  pending_elicitation: z.strictObject({ server: z.string(), message: z.string(), requested_schema: z.record(z.string(), z.unknown()) }).optional(),
});

export const chatEvents = agentEventSchema;

/** `mcp_prompts`: the prompts of every running MCP server. */
export const mcpPromptsResult = z.strictObject({
  prompts: z.array(
    z.strictObject({
      server: z.string(),
      name: z.string(),
      description: z.string().optional(),
      arguments: z.array(z.strictObject({ name: z.string(), description: z.string().optional(), required: z.boolean().optional() })),
    }),
  ),
});

/** `mcp_resources`: the resources and resource templates of every running MCP server. */
export const mcpResourcesResult = z.strictObject({
  resources: z.array(z.strictObject({ server: z.string(), uri: z.string(), name: z.string(), description: z.string().optional(), mime_type: z.string().optional() })),
  templates: z.array(z.strictObject({ server: z.string(), uri_template: z.string(), name: z.string(), description: z.string().optional(), mime_type: z.string().optional() })),
});

export const warmUpResult = z.strictObject({ status: ok, ms: z.number().nonnegative() });

/** JSON-RPC `$/cancelRequest`: a notification, answered (null) only when sent with an id. */
export const nullResult = z.null();

/** `pull {ref, force?}`: the file the model was written to, and its size. */
export const pullResult = z.strictObject({ path: z.string(), bytes: z.number().int().nonnegative() });

/** `pull`'s progress events (best-effort, like every event). */
export const pullEvents = z.discriminatedUnion("event", [
  z.strictObject({ event: z.literal("pull_progress"), downloaded_bytes: z.number().int().nonnegative(), total_bytes: z.number().int().nonnegative().nullable() }),
]);

/** `warm_up`'s events: a download's progress, and the scheduler's `model_load` states (no `step`: no turn runs). */
export const warmUpEvents = z.discriminatedUnion("event", [
  ...pullEvents.options,
  z.strictObject({
    event: z.literal("model_load"),
    model: z.string(),
    state: z.enum(["queued", "loading", "loaded"]),
    progress: z.number().min(0).max(1).optional(),
    unloading: z.array(z.string()).optional(),
  }),
]);

/** `unload {model?}`: the models whose engines were closed. */
export const unloadResult = z.strictObject({ unloaded: z.array(z.string()) });

/** `metrics`: every series of the server's registry with its samples (docs/operations.md). */
export const metricsResult = z.strictObject({
  metrics: z.array(
    z.strictObject({
      name: z.string(),
      help: z.string(),
      type: z.enum(["counter", "gauge", "histogram", "summary"]),
      samples: z.array(z.strictObject({ name: z.string(), labels: z.record(z.string(), z.string()), value: z.number() })),
    }),
  ),
});

/** `tokenize`: the token ids (and their texts with `with_pieces`). */
export const tokenizeResult = z.strictObject({ tokens: z.array(z.number().int().nonnegative()), pieces: z.array(z.string()).optional() });

/** `detokenize`: the text of the tokens. */
export const detokenizeResult = z.strictObject({ content: z.string() });

const bytes = z.number().int().nonnegative();
/** `ps`: the memory budget and every configured model, loaded or not (docs/models.md). */
export const psResult = z.strictObject({
  budget: z.strictObject({ ram_bytes: bytes, vram_bytes: bytes, used_ram_bytes: bytes, used_vram_bytes: bytes }),
  models: z.array(
    z.strictObject({
      name: z.string(),
      engine: z.enum(ENGINE_KINDS),
      status: z.enum(["loaded", "loading", "queued", "unloaded", "failed"]),
      memory: z.strictObject({ ram_bytes: bytes, vram_bytes: bytes, measured: z.boolean() }),
      expires_at: z.string().nullable(),
      pinned: z.boolean(),
      in_flight: z.number().int().nonnegative(),
    }),
  ),
});
