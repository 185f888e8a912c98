// A scripted OpenAI-compatible upstream on 127.0.0.1:0 for unit tests of the chunk mapping and the
// error paths. It records every request body and when (and whether) the client closed the response.
// End-to-end behaviour against a real server is covered by test/e2e/openai-engine-llama-server.test.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
  /** Resolves when the response closes; `finished` false = the client hung up before we ended it. */
  closed: Promise<{ finished: boolean; at: number }>;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, body: unknown) => void | Promise<void>;

export interface ScriptedUpstream {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** `handler`, behind an answer to `GET /v1/models` that lists one model `id` (what the openai engine's warm-up asks). */
export function listingModel(id: string, handler: UpstreamHandler): UpstreamHandler {
  return (req, res, body) => {
    if (req.url !== "/v1/models") return handler(req, res, body);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data: [{ id, object: "model", created: 1, owned_by: "test" }] }));
  };
}

export async function startUpstream(handler: UpstreamHandler): Promise<ScriptedUpstream> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const closed = new Promise<{ finished: boolean; at: number }>((resolve) => {
      res.once("close", () => resolve({ finished: res.writableFinished, at: Date.now() }));
    });
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, closed });
      void Promise.resolve(handler(req, res, body)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that was just free: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
}

export function sendData(res: ServerResponse, data: unknown): void {
  res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

export function sendJsonError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code: status, message, type: "test_error" } }));
}

export interface DeltaFields {
  content?: string;
  reasoning_content?: string;
  role?: string;
  tool_calls?: Array<{ index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }>;
}

/** One `chat.completion.chunk` with a single choice. */
export function chunk(delta: DeltaFields, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1,
    model: "test-model",
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The final `include_usage` chunk: no choices, just totals. */
export function usageChunk(promptTokens: number, completionTokens: number): Record<string, unknown> {
  return {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1,
    model: "test-model",
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

/** Writes the events then `[DONE]` and ends the response. */
export function scripted(events: unknown[], options: { done?: boolean } = {}): UpstreamHandler {
  return (_req, res) => {
    startSse(res);
    for (const event of events) sendData(res, event);
    if (options.done !== false) sendData(res, "[DONE]");
    res.end();
  };
}

/** A `/embeddings` answer: float vectors in order, as the OpenAI API returns them. */
export function embeddingsBody(vectors: number[][], promptTokens: number, model = "test-model"): Record<string, unknown> {
  return {
    object: "list",
    data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/** One streamed `text_completion` chunk (legacy /completions). */
export function textChunk(text: string, finishReason: string | null = null): Record<string, unknown> {
  return { id: "cmpl-test", object: "text_completion", created: 1, model: "test-model", choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }] };
}

/** Sends a JSON body with the given status and ends the response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
