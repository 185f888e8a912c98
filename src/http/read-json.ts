import type { Context } from "hono";
import { RuntimeError } from "../shared/runtime-error.js";

/** The body as JSON; anything unparsable is `invalid_json` (400), never a 500. */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RuntimeError("invalid_json", "The request body is not valid JSON");
  }
}
