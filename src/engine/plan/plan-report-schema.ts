import { z } from "zod";
import { ERROR_CODES } from "../../shared/runtime-error.js";
import { ENGINE_KINDS } from "../../config/engine-kinds.js";

/**
 * The plan report as it leaves the process (`plan --json`, the stdio `plan` result and its error
 * `details`, doctor's plan check): snake_case, sizes in bytes. Internal code keeps the camelCase
 * `ModelPlanReport`; `plan-json.ts` is the one mapping, typed by this schema, so the JSON Schema
 * generated from it (schema/) cannot drift from what is written. Loaded only by that mapping's
 * types and the schema build, never on a request path.
 */

const bytes = z.number().nonnegative();
const memoryPool = z.strictObject({ total_bytes: bytes, free_bytes: bytes });
const memorySplit = z.strictObject({ ram_bytes: bytes, vram_bytes: bytes });

export const hardwareJsonSchema = z.strictObject({
  ram: memoryPool,
  gpu: z.strictObject({
    /** The backend node-llama-cpp loaded; false = CPU only. */
    backend: z.union([z.literal(false), z.enum(["cuda", "vulkan", "metal"])]),
    devices: z.array(z.string()),
    vram: memoryPool,
    unified_bytes: bytes,
    probed: z.boolean(),
  }),
  cpu: z.strictObject({ logical_cores: z.number().int(), math_cores: z.number().int() }),
  margins: memorySplit,
  summary: z.string(),
});

export const modelFactsJsonSchema = z.strictObject({
  architecture: z.string(),
  parameters: z.number(),
  quantization: z.string(),
  bits_per_weight: z.number(),
  /** null when the GGUF does not say. */
  train_context_size: z.number().int().nullable(),
  total_layers: z.number().int(),
  weights_bytes: bytes,
});

export const planEstimatesJsonSchema = z.strictObject({
  weights_bytes: bytes,
  kv_cache_bytes: bytes,
  compute_bytes: bytes,
  total_bytes: bytes,
  ram_bytes: bytes,
  vram_bytes: bytes,
});

const errorCode = z.enum(ERROR_CODES);

export const modelPlanJsonSchema = z.strictObject({
  gpu_layers: z.number().int(),
  total_layers: z.number().int(),
  ctx_size: z.number().int(),
  threads: z.number().int(),
  estimates: planEstimatesJsonSchema,
  reason: z.string(),
  notes: z.array(z.string()),
  command: z.array(z.string()).optional(),
});

export const modelPlanEntryJsonSchema = z.strictObject({
  name: z.string(),
  /** The reference (or path) planned when it was given instead of a configured model (`plan --model REF`, the pull fit check). */
  ref: z.string().optional(),
  engine: z.enum(ENGINE_KINDS),
  status: z.enum(["ok", "error"]),
  remote: z.strictObject({ base_url: z.string(), model: z.string().nullable(), summary: z.string() }).optional(),
  model: modelFactsJsonSchema.optional(),
  plan: modelPlanJsonSchema.optional(),
  error: z.strictObject({ code: errorCode, message: z.string(), details: z.record(z.string(), z.unknown()).optional() }).optional(),
  /** How much of each agent's context its tool schemas take (only for agents with tools). */
  tool_schemas: z
    .array(
      z.strictObject({
        agent: z.string(),
        model: z.string(),
        tools: z.number().int(),
        tool_tokens: z.number().int(),
        system_tokens: z.number().int(),
        window: z.number().int(),
        reply_reserve: z.number().int(),
        counted: z.enum(["tokenizer", "estimate"]),
        verdict: z.enum(["ok", "over_half", "no_room"]),
      }),
    )
    .optional(),
});

export const planReportJsonSchema = z.strictObject({
  ok: z.boolean(),
  hardware: hardwareJsonSchema,
  models: z.array(modelPlanEntryJsonSchema),
  notes: z.array(z.string()),
});

export type PlanReportJson = z.output<typeof planReportJsonSchema>;
export type ModelPlanEntryJson = z.output<typeof modelPlanEntryJsonSchema>;
export type ModelFactsJson = z.output<typeof modelFactsJsonSchema>;
export type PlanEstimatesJson = z.output<typeof planEstimatesJsonSchema>;
export type HardwareJson = z.output<typeof hardwareJsonSchema>;
