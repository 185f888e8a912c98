import type { Context } from "hono";
import { RuntimeError } from "../../shared/runtime-error.js";

/**
 * The body as JSON; anything unparsable is `invalid_json` (400), never a 500. A client that goes
 * away before its body has arrived is `cancelled` (logged as such, not as a server failure).
 */
export async function readJson(c: Context): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (error) {
    if (c.req.raw.signal.aborted) throw new RuntimeError("cancelled", "The client closed the connection before its request body arrived");
    throw error;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RuntimeError("invalid_json", "The request body is not valid JSON");
  }
}
