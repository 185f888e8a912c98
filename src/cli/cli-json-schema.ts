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

/** What `local-ai doctor --json` and `local-ai plan --json` print (schema/cli.schema.json). */
export function cliJsonSchema(): Record<string, unknown> {
  const defs: Array<readonly [string, ZodType]> = [
    ["doctor", doctorReportSchema],
    ["plan", anyOf([planReportJsonSchema, planFailureJsonSchema])],
  ];
  defs.push(["output", anyOf(defs.map(([, schema]) => schema))]);
  return jsonSchemaDocument({
    id: "urn:local-ai-core:schema:cli",
    title: "local-ai --json outputs",
    description: "The JSON documents `local-ai doctor --json` (`doctor`) and `local-ai plan --json` (`plan`) print on stdout. Generated from the same schemas as the stdio results.",
    definitions: defs,
    root: "output",
  });
}
