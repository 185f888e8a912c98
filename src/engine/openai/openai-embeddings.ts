// POST /v1/embeddings passed through to an OpenAI-compatible upstream with the official client.
import type OpenAI from "openai";
import { cancelledError, type UpstreamContext } from "./openai-errors.js";
import type { EmbedRequest, EmbedResult } from "../embedding-types.js";
import { toPassthroughError } from "./upstream-refusal.js";

/**
 * The upstream decides what it can embed and whether it can shorten vectors (`dimensions`); its
 * refusals come back as 400. Floats are asked for explicitly: the SDK would otherwise ask for
 * base64 and decode whatever comes back as base64, which breaks on servers that ignore
 * `encoding_format` and send floats anyway. The HTTP layer encodes base64 for its own client.
 */
export async function embedViaOpenAi(client: OpenAI, model: string, request: EmbedRequest): Promise<EmbedResult> {
  const context: UpstreamContext = { baseUrl: client.baseURL, model };
  const { signal } = request;
  const isAborted = (): boolean => signal?.aborted === true;
  if (isAborted()) throw cancelledError(signal?.reason);
  // The SDK types a single token array as number[] and several as number[][]: all strings or all tokens.
  const input = request.input.every((entry) => typeof entry === "string") ? request.input : (request.input as number[][]);
  try {
    const response = await client.embeddings.create(
      { model, input, encoding_format: "float", ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }) },
      signal === undefined ? {} : { signal },
    );
    const vectors = [...response.data].sort((a, b) => a.index - b.index).map((item) => item.embedding);
    return { vectors, promptTokens: response.usage?.prompt_tokens ?? 0 };
  } catch (err) {
    throw toPassthroughError(err, context, isAborted());
  }
}
