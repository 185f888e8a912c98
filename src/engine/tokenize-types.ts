/** What `Engine.tokenize` / `detokenize` take and return (POST /tokenize, /detokenize; stdio `tokenize`). */

export interface TokenizeRequest {
  content: string;
  /** Add the model's special tokens (BOS) as a prompt would have them; default false, as llama-server. */
  addSpecial?: boolean;
  /** Text such as `<|im_start|>` becomes its special token; default true, as llama-server. */
  parseSpecial?: boolean;
  /** Also return each token's text. */
  withPieces?: boolean;
  /** More tokens than this is refused (invalid_request) as soon as it is reached: config llama.max_tokenize_tokens. */
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface TokenizeResult {
  tokens: number[];
  /** Each token's text, when asked for (`withPieces`). */
  pieces?: string[];
}

export interface DetokenizeRequest {
  tokens: number[];
  signal?: AbortSignal;
}
