import { z } from "zod";
import type { DoctorReport } from "./doctor-report.js";

/**
 * The doctor report as data (`doctor --json`, the stdio `doctor` result), for the JSON Schema in
 * schema/. `data` is each check's own facts (snake_case keys; see docs/doctor.md). The type check
 * below keeps it and `DoctorReport` the same shape.
 */
export const checkStatusSchema = z.enum(["ok", "warn", "fail"]);

export const checkResultSchema = z.strictObject({
  id: z.string(),
  title: z.string(),
  status: checkStatusSchema,
  finding: z.string(),
  fix: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

export const doctorReportSchema = z.strictObject({
  ok: z.boolean(),
  summary: z.strictObject({ ok: z.number().int(), warn: z.number().int(), fail: z.number().int() }),
  checks: z.array(checkResultSchema),
  version: z.string(),
  generated_at: z.string(),
});

export type DoctorReportJson = z.output<typeof doctorReportSchema>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const doctorSchemaMatchesTheReport: Same<DoctorReportJson, DoctorReport> = true;
void doctorSchemaMatchesTheReport;
