import type { ModelConfig } from "../config/schema.js";
import type { LoadProgress } from "./engine.js";

export interface ModelFileOptions {
  /** The load's own signal (an engine closing), never one caller's. */
  signal?: AbortSignal;
  /** Download progress (phase "downloading"), for a model that is fetched before it loads. */
  onProgress?: (progress: LoadProgress) => void;
}

/**
 * The local GGUF file a configured model loads. A `path` that is a file is that file; one that is a
 * reference (URL, hf:) is its downloaded copy in app.models_dir, fetched first only where the model
 * says `download: auto`, otherwise model_missing with the `local-ai pull` fix. Engines call it at
 * load time and never know which case it was (src/models implements it; the composition root
 * wires it in).
 */
export type ModelFileResolver = (options: ModelFileOptions) => Promise<string>;

/** Builds the resolver of one configured model. */
export type ModelFileSource = (name: string, model: ModelConfig) => ModelFileResolver;
