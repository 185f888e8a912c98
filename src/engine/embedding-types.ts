/** What `Engine.embed` takes and returns (POST /v1/embeddings, engine side). */

export interface EmbedRequest {
  /** One vector per entry: a text, or token ids (for engines that embed tokens). */
  input: Array<string | number[]>;
  /** Requested vector length; an engine that cannot shorten vectors refuses any other size. */
  dimensions?: number;
  /** Aborting stops the work between inputs (a single input is short) and rejects with `cancelled`. */
  signal?: AbortSignal;
}

export interface EmbedResult {
  /** In input order, L2-normalised (unit length) like OpenAI's and llama-server's. */
  vectors: number[][];
  /** Tokens evaluated for all inputs together. */
  promptTokens: number;
}
