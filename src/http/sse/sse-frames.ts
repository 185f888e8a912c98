/** SSE wire text any dialect sends. JSON.stringify never emits a raw newline, so one `data:` line per frame is safe. */
export const dataFrame = (value: unknown): string => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
export const namedFrame = (name: string, value: unknown): string => `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`;
export const KEEP_ALIVE_FRAME = ": keep-alive\n\n";

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache",
  Connection: "keep-alive",
  // Reverse proxies (nginx) would otherwise buffer the stream.
  "X-Accel-Buffering": "no",
} as const;
