import type { Context, Hono } from "hono";
import { z } from "zod";
import { HttpError } from "../http-error.js";
import { parseBody } from "../request/parse-body.js";
import { responseReader } from "./response-reader.js";
import type { ResponseStore, StoredResponse } from "./response-store.js";

const listQuery = z.object({
  after: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
});

/**
 * GET /v1/responses/{id}, GET /v1/responses/{id}/input_items, DELETE /v1/responses/{id}. Another
 * key's response answers exactly as an unknown id (404, never 403): its existence is not told.
 */
export function registerStoredResponseRoutes(app: Hono, store: ResponseStore | undefined): void {
  app.get("/v1/responses/:id", async (c) => c.json((await stored(store, c)).response));

  app.get("/v1/responses/:id/input_items", async (c) => {
    const query = parseBody(listQuery, c.req.query());
    const record = await stored(store, c);
    const items = query.order === "asc" ? record.input_items : [...record.input_items].reverse();
    let start = 0;
    if (query.after !== undefined) {
      const at = items.findIndex((item) => item.id === query.after);
      if (at === -1) throw new HttpError("not_found", `after: no input item with id ${JSON.stringify(query.after.slice(0, 80))} in this response`, "after");
      start = at + 1;
    }
    const data = items.slice(start, start + query.limit);
    return c.json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + query.limit < items.length });
  });

  app.delete("/v1/responses/:id", async (c) => {
    const id = c.req.param("id");
    if (store === undefined || !(await store.delete(id, responseReader(c)))) throw notFound(id);
    return c.json({ id, object: "response", deleted: true });
  });
}

async function stored(store: ResponseStore | undefined, c: Context): Promise<StoredResponse> {
  const id = c.req.param("id") ?? "";
  const record = (await store?.get(id, responseReader(c))) ?? null;
  if (record === null) throw notFound(id);
  return record;
}

const notFound = (id: string): HttpError => new HttpError("not_found", `No stored response with id ${JSON.stringify(id.slice(0, 80))} (never stored, deleted, or expired)`, "response_id");
