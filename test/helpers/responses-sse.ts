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
