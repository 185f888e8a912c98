import { z } from "zod";
import { parseBody } from "../request/parse-body.js";

/** Documents per request: what a RAG front end sends (a page of search hits) with room to spare. */
export const MAX_RERANK_DOCUMENTS = 1000;

// Loose: Jina and Cohere clients send fields of their own (`max_chunks_per_doc`...), tolerated.
const rerankBody = z
  .object({
    model: z.string().min(1).optional(),
    query: z.string().min(1),
    // Cohere's v1 clients may send {text} objects; both shapes are one list of texts.
    documents: z
      .array(z.union([z.string(), z.object({ text: z.string() }).loose().transform((document) => document.text)]))
      .min(1)
      .max(MAX_RERANK_DOCUMENTS),
    top_n: z.number().int().min(1).nullish(),
    return_documents: z.boolean().nullish(),
  })
  .loose();

export interface RerankBody {
  model?: string;
  query: string;
  documents: string[];
  /** At most this many results (default: every document). */
  topN: number;
  returnDocuments: boolean;
}

export function parseRerankRequest(body: unknown): RerankBody {
  const parsed = parseBody(rerankBody, body);
  return {
    ...(parsed.model === undefined ? {} : { model: parsed.model }),
    query: parsed.query,
    documents: parsed.documents,
    topN: Math.min(parsed.top_n ?? parsed.documents.length, parsed.documents.length),
    returnDocuments: parsed.return_documents === true,
  };
}

export interface RerankResultItem {
  index: number;
  relevance_score: number;
  /** Cohere's and Jina's shape, with return_documents. */
  document?: { text: string };
}

/** llama-server's answer (`{model, object: "list", usage, results}`), sorted by score, best first, cut to top_n. */
export function rerankResponse(body: RerankBody, id: string, scores: readonly number[], promptTokens: number): { model: string; object: "list"; usage: { prompt_tokens: number; total_tokens: number }; results: RerankResultItem[] } {
  const results = scores
    .map((score, index): RerankResultItem => ({ index, relevance_score: score, ...(body.returnDocuments ? { document: { text: body.documents[index] as string } } : {}) }))
    // Stable on ties: the earlier document first.
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, body.topN);
  return { model: id, object: "list", usage: { prompt_tokens: promptTokens, total_tokens: promptTokens }, results };
}
