import { z, type ZodType } from "zod";
import { doctorReportSchema } from "../diagnostics/doctor-report-schema.js";
import { planReportJsonSchema } from "../engine/plan/plan-report-schema.js";
import { ERROR_CODES } from "../shared/runtime-error.js";
import { anyOf, jsonSchemaDocument } from "../wire/json-schema-document.js";

/** `plan --json` when no report could be made (no config, an unknown model...): commands/plan-action.ts. */
export const planFailureJsonSchema = z.strictObject({
  ok: z.literal(false),
  error: z.strictObject({ code: z.enum(ERROR_CODES), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
});

/** `local-ai mcp list --json` (commands/mcp-list-action.ts; docs/tools.md). */
export const mcpListJsonSchema = z.strictObject({
  servers: z.array(
    z.strictObject({
      name: z.string(),
      transport: z.enum(["stdio", "http", "sse"]),
      state: z.enum(["connected", "needs_login", "failed"]),
      reason: z.string().optional(),
      tools: z.int().min(0),
      prompts: z.int().min(0),
      resources: z.int().min(0),
    }),
  ),
});

/** What `local-ai doctor --json`, `local-ai plan --json` and `local-ai mcp list --json` print (schema/cli.schema.json). */
export function cliJsonSchema(): Record<string, unknown> {
  const defs: Array<readonly [string, ZodType]> = [
    ["doctor", doctorReportSchema],
    ["plan", anyOf([planReportJsonSchema, planFailureJsonSchema])],
    ["mcp_list", mcpListJsonSchema],
  ];
  defs.push(["output", anyOf(defs.map(([, schema]) => schema))]);
  return jsonSchemaDocument({
    id: "urn:local-ai-core:schema:cli",
    title: "local-ai --json outputs",
    description: "The JSON documents `local-ai doctor --json` (`doctor`), `local-ai plan --json` (`plan`) and `local-ai mcp list --json` (`mcp_list`) print on stdout. Generated from the same schemas as the stdio results.",
    definitions: defs,
    root: "output",
  });
}
