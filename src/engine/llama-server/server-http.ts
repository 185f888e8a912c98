// Small authenticated HTTP calls to our llama-server (health, ownership, ready check, slots).
// Chat completions go through the openai client instead; see llama-server-engine.ts.

export interface ServerEndpoint {
  /** http://127.0.0.1:<port> (no /v1). */
  origin: string;
  port: number;
  /** The per-launch key: every request carries it. */
  apiKey: string;
}

export interface HttpAnswer {
  status: number;
  body: unknown;
}

/**
 * One request with a hard timeout. Network failures (refused, reset) resolve to status 0 with
 * the error message as body, since callers treat "nobody answered" as data, not an exception;
 * only the caller's own abort rejects.
 */
export async function callServer(endpoint: ServerEndpoint, path: string, options: CallOptions): Promise<HttpAnswer> {
  const first = await callOnce(endpoint, path, options);
  // A kept-alive connection the server closed while we were busy (llama-server drops idle ones
  // after 5 s; a long model load in process can hold our event loop past that) fails before any
  // answer. Every call here is safe to repeat (health, tokenize, props, slots): once, on a new one.
  return first.staleSocket ? (await callOnce(endpoint, path, options)).answer : first.answer;
}

interface CallOptions {
  method?: "GET" | "POST";
  json?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
}

async function callOnce(endpoint: ServerEndpoint, path: string, options: CallOptions): Promise<{ answer: HttpAnswer; staleSocket: boolean }> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  const headers: Record<string, string> = { authorization: `Bearer ${endpoint.apiKey}` };
  if (options.json !== undefined) headers["content-type"] = "application/json";
  try {
    const response = await fetch(`${endpoint.origin}${path}`, {
      method: options.method ?? "GET",
      headers,
      signal,
      ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { answer: { status: response.status, body }, staleSocket: false };
  } catch (error) {
    if (options.signal?.aborted === true) throw error;
    return { answer: { status: 0, body: error instanceof Error ? describe(error) : String(error) }, staleSocket: !timeout.aborted && isClosedSocket(error) };
  }
}

/** undici's "other side closed" / a reset: the connection died under the request, not a refusal. */
function isClosedSocket(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code === "UND_ERR_SOCKET" || cause?.code === "ECONNRESET";
}

function describe(error: Error): string {
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

/** The server's own error words from `{"error": {"message": ...}}`, or the raw body. */
export function errorMessageOf(body: unknown): string {
  if (typeof body === "object" && body !== null) {
    const error = (body as { error?: unknown }).error;
    if (typeof error === "object" && error !== null) {
      const message = (error as { message?: unknown }).message;
      if (typeof message === "string") return message;
    }
    return JSON.stringify(body).slice(0, 300);
  }
  return String(body).slice(0, 300);
}

export interface SlotState {
  id: number;
  processing: boolean;
}

/** The server's slots, or null when this build does not expose /slots. */
export async function readSlots(endpoint: ServerEndpoint, signal?: AbortSignal): Promise<SlotState[] | null> {
  const answer = await callServer(endpoint, "/slots", { timeoutMs: 1000, ...(signal ? { signal } : {}) });
  if (answer.status !== 200 || !Array.isArray(answer.body)) return null;
  return answer.body.map((slot: unknown, index) => {
    const s = (typeof slot === "object" && slot !== null ? slot : {}) as { id?: unknown; is_processing?: unknown; state?: unknown };
    // Older builds report `state` (0 idle, 1 processing) instead of `is_processing`.
    const processing = s.is_processing === true || s.state === 1;
    return { id: typeof s.id === "number" ? s.id : index, processing };
  });
}
