import type { ModelConfig } from "../../config/schema.js";

/** A llama-server model launched with a multimodal projector takes images. */
export function visionEnabled(config: ModelConfig): boolean {
  return config.extra_args.some((arg) => arg === "-mm" || arg.startsWith("--mmproj"));
}

/** A llama-server model launched with its rerank endpoint (the config key, or the flag in extra_args). */
export function rerankEnabled(config: ModelConfig): boolean {
  return config.rerank || config.extra_args.some((arg) => arg === "--reranking" || arg === "--rerank");
}

/** A llama-server model launched in embeddings mode (llama.cpp spells it --embedding too). */
export function embeddingsEnabled(config: ModelConfig): boolean {
  return config.extra_args.some((arg) => arg === "--embeddings" || arg === "--embedding");
}
