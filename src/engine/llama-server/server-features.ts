import type { ModelConfig } from "../../config/schema.js";

/** A llama-server model launched with a multimodal projector takes images. */
export function visionEnabled(config: ModelConfig): boolean {
  return config.extra_args.some((arg) => arg === "-mm" || arg.startsWith("--mmproj"));
}

/** A llama-server model launched in embeddings mode (llama.cpp spells it --embedding too). */
export function embeddingsEnabled(config: ModelConfig): boolean {
  return config.extra_args.some((arg) => arg === "--embeddings" || arg === "--embedding");
}
