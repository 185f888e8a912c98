import { RuntimeError } from "../shared/runtime-error.js";

/** A tokenize request past llama.max_tokenize_tokens (POST /tokenize, stdio `tokenize`): a 400 naming the limit and the key. */
export function tooManyTokens(max: number): RuntimeError {
  return new RuntimeError("invalid_request", `content is more than ${max} tokens, the most one tokenize request may take (llama.max_tokenize_tokens raises it)`, {
    details: { param: "content", limit: max },
  });
}
