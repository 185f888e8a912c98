// POST /tokenize and /detokenize on the running llama-server: the model's own tokenizer.
import { RuntimeError } from "../../shared/runtime-error.js";
import type { TokenizeRequest, TokenizeResult } from "../tokenize-types.js";
import { tooManyTokens } from "../tokenize-limit.js";
import { callServer, errorMessageOf, type ServerEndpoint } from "./server-http.js";

const TIMEOUT_MS = 30_000;

type Piece = string | number[];

export async function serverTokenize(endpoint: ServerEndpoint, modelName: string, request: TokenizeRequest): Promise<TokenizeResult> {
  const answer = await callServer(endpoint, "/tokenize", {
    method: "POST",
    json: { content: request.content, add_special: request.addSpecial === true, parse_special: request.parseSpecial !== false, with_pieces: request.withPieces === true },
    timeoutMs: TIMEOUT_MS,
    ...(request.signal ? { signal: request.signal } : {}),
  });
  const tokens = (answer.body as { tokens?: unknown } | null)?.tokens;
  if (answer.status !== 200 || !Array.isArray(tokens)) throw refused(answer.status, answer.body, modelName, "/tokenize");
  // The server tokenized it in its own process; the same limit as the embedded engine's keeps the answer's size bounded.
  if (request.maxTokens !== undefined && tokens.length > request.maxTokens) throw tooManyTokens(request.maxTokens);
  if (request.withPieces !== true) return { tokens: tokens as number[] };
  const entries = tokens as Array<{ id: number; piece: Piece }>;
  // A piece that is not valid UTF-8 on its own comes back as its bytes.
  return { tokens: entries.map((entry) => entry.id), pieces: entries.map((entry) => (typeof entry.piece === "string" ? entry.piece : Buffer.from(entry.piece).toString("utf8"))) };
}

export async function serverDetokenize(endpoint: ServerEndpoint, modelName: string, tokens: readonly number[], signal?: AbortSignal): Promise<string> {
  const answer = await callServer(endpoint, "/detokenize", { method: "POST", json: { tokens }, timeoutMs: TIMEOUT_MS, ...(signal ? { signal } : {}) });
  const content = (answer.body as { content?: unknown } | null)?.content;
  if (answer.status !== 200 || typeof content !== "string") throw refused(answer.status, answer.body, modelName, "/detokenize");
  return content;
}

function refused(status: number, body: unknown, modelName: string, path: string): RuntimeError {
  const message = `llama-server for model "${modelName}" answered ${path} with ${status}: ${errorMessageOf(body)}`;
  return status >= 400 && status < 500 ? new RuntimeError("invalid_request", message) : new RuntimeError("engine_error", message);
}
