import type { z } from "zod";
import { RuntimeError } from "../../shared/runtime-error.js";

/** Validates a body; the first issue becomes `invalid_request` with its path as `param` (OpenAI style). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue === undefined ? null : issue.path.map(String).join(".") || null;
  throw new RuntimeError("invalid_request", issue === undefined ? "Invalid request body" : `${param ?? "body"}: ${issue.message}`, {
    details: param === null ? {} : { param },
  });
}
