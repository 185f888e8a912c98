/** The OpenAI `list` of embeddings for one request. */

export interface EmbeddingListInput {
  model: string;
  vectors: number[][];
  promptTokens: number;
  encodingFormat: "float" | "base64";
}

export function embeddingList(input: EmbeddingListInput): Record<string, unknown> {
  return {
    object: "list",
    data: input.vectors.map((vector, index) => ({
      object: "embedding",
      index,
      embedding: input.encodingFormat === "base64" ? toBase64(vector) : vector,
    })),
    model: input.model,
    usage: { prompt_tokens: input.promptTokens, total_tokens: input.promptTokens },
  };
}

/** OpenAI's base64 format: the float32 values, little-endian, as one base64 string. */
export function toBase64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString("base64");
}
