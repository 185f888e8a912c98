// POST /rerank on an OpenAI-compatible server (llama-server --reranking; vLLM, Jina/Cohere-style
// upstreams), with the official client's transport, auth and error mapping.
import type OpenAI from "openai";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { RerankRequest, RerankResult } from "../rerank-types.js";
import { cancelledError, type UpstreamContext } from "./openai-errors.js";
import { toPassthroughError } from "./upstream-refusal.js";

interface RerankAnswer {
  results?: Array<{ index?: unknown; relevance_score?: unknown }>;
  usage?: { prompt_tokens?: unknown; total_tokens?: unknown };
}

/**
 * Every document is asked for (top_n = all) so the scores come back for each; sorting and top_n
 * are the HTTP layer's, the same on every engine. `<base_url>/rerank`: base_url ends in /v1.
 */
export async function rerankViaOpenAi(client: OpenAI, model: string, request: RerankRequest): Promise<RerankResult> {
  const context: UpstreamContext = { baseUrl: client.baseURL, model };
  const { signal } = request;
  if (signal?.aborted === true) throw cancelledError(signal.reason);
  let answer: RerankAnswer;
  try {
    answer = await client.post<RerankAnswer>("/rerank", {
      body: { model, query: request.query, documents: request.documents, top_n: request.documents.length },
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (err) {
    throw toPassthroughError(err, context, isAborted(signal));
  }
  const scores = new Array<number>(request.documents.length).fill(Number.NaN);
  for (const result of answer.results ?? []) {
    if (typeof result.index === "number" && typeof result.relevance_score === "number" && result.index >= 0 && result.index < scores.length) scores[result.index] = result.relevance_score;
  }
  const missing = scores.findIndex((score) => Number.isNaN(score));
  if (missing !== -1) throw new RuntimeError("engine_error", `${context.baseUrl}/rerank returned no score for documents[${missing}] (model "${model}")`);
  const usage = answer.usage?.prompt_tokens ?? answer.usage?.total_tokens;
  return { scores, promptTokens: typeof usage === "number" ? usage : 0 };
}

/** Read after an await: the signal may have been aborted since (TypeScript narrows it as before). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
