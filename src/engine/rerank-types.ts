/** What `Engine.rerank` takes and returns (POST /v1/rerank, engine side). */

export interface RerankRequest {
  query: string;
  documents: string[];
  /** Aborting stops the work between documents and rejects with `cancelled`. */
  signal?: AbortSignal;
}

export interface RerankResult {
  /** One relevance score per document, in input order (not sorted). */
  scores: number[];
  /** Tokens evaluated for all documents together (query + document each). */
  promptTokens: number;
}
