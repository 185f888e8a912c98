import type { ModelConfig } from "../config/schema.js";
import type { Engine, EngineKind } from "./engine.js";

export interface ModelCapabilities {
  /** Function calling (native tool calls through the chat template or the upstream). */
  tools: boolean;
  /** POST /v1/embeddings works for this model. */
  embeddings: boolean;
  /** Image parts reach the model (not flattened to text). */
  vision: boolean;
}

export interface ModelDescription {
  engine: EngineKind;
  /** The context in use once the model is loaded; before that, the configured ctx_size. */
  contextLength: number;
  capabilities: ModelCapabilities;
}

/**
 * What a configured model can do, from its config alone (nothing is loaded or contacted):
 * - embedded: tools (chat template), embeddings (a second llama.cpp context in embeddings mode on
 *   the same weights), no vision (node-llama-cpp 3.21 has no image input).
 * - llama-server: tools (--jinja); embeddings only when extra_args has `--embeddings` (opt-in:
 *   older llama.cpp builds refuse chat in embeddings mode); vision only when extra_args loads a
 *   projector (--mmproj).
 * - openai: everything is passed through; the upstream decides, and refuses with a 400.
 */
export function describeModel(config: ModelConfig, engine?: Engine): ModelDescription {
  const loaded = engine?.contextLength?.() ?? null;
  return { engine: config.engine, contextLength: loaded ?? config.ctx_size, capabilities: capabilitiesOf(config) };
}

function capabilitiesOf(config: ModelConfig): ModelCapabilities {
  switch (config.engine) {
    case "embedded":
      return { tools: true, embeddings: true, vision: false };
    case "llama-server":
      return { tools: true, embeddings: embeddingsEnabled(config), vision: visionEnabled(config) };
    case "openai":
      return { tools: true, embeddings: true, vision: true };
  }
}

/** A llama-server model launched with a multimodal projector takes images. */
export function visionEnabled(config: ModelConfig): boolean {
  return config.extra_args.some((arg) => arg === "-mm" || arg.startsWith("--mmproj"));
}

/** A llama-server model launched in embeddings mode (llama.cpp spells it --embedding too). */
export function embeddingsEnabled(config: ModelConfig): boolean {
  return config.extra_args.some((arg) => arg === "--embeddings" || arg === "--embedding");
}
