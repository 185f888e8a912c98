/** One server-sent event as it came over the wire: its `event:` name and its parsed `data:`. */
export interface SseEvent {
  name: string | null;
  data: Record<string, unknown>;
}

/** Reads a whole SSE body into events (comments such as `: keep-alive` are skipped). */
export async function readSseEvents(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  return parseSse(text);
}

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split("\n\n")) {
    let name: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) name = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (data.length > 0) events.push({ name, data: JSON.parse(data.join("\n")) as Record<string, unknown> });
  }
  return events;
}

/** POST /v1/responses with a JSON body (no client library: the exact wire). */
export function postResponses(base: string, body: unknown, init: { signal?: AbortSignal; path?: string } = {}): Promise<Response> {
  return fetch(`${base}/v1/responses${init.path ?? ""}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    ...(init.signal === undefined ? {} : { signal: init.signal }),
  });
}

export interface RefusedResponse {
  status: number;
  error: { code: string; param: string | null; type: string; message: string };
}

/** A request that must be refused: its status and OpenAI error body. */
export async function refusedResponse(base: string, body: unknown, init: { path?: string } = {}): Promise<RefusedResponse> {
  const reply = await postResponses(base, body, init);
  return { status: reply.status, error: ((await reply.json()) as { error: RefusedResponse["error"] }).error };
}
