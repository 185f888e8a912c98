import { embeddedAutoThreads } from "../auto-threads.js";
import { kvCacheDir, legacyKvCacheDir } from "../embedded/kv-cache-dir.js";
import type { EngineDriver } from "./engine-driver.js";

/** node-llama-cpp in this process: one context sequence per parallel chat, each with its own ctx_size. */
export const embeddedDriver: EngineDriver = {
  kind: "embedded",
  async create(name, model, deps) {
    const { EmbeddedEngine } = await import("../embedded/embedded-engine.js");
    const dataDir = deps.config.app.data_dir;
    return new EmbeddedEngine(name, model, {
      llama: deps.llama,
      logger: deps.logger,
      parallel: model.parallel,
      kvCache: { dir: kvCacheDir(dataDir, name), legacyDir: legacyKvCacheDir(dataDir, name), diskBytes: model.kv_cache_disk_bytes },
      ...(deps.validateModel ? { validateModel: deps.validateModel } : {}),
      ...(deps.modelFile ? { modelFile: deps.modelFile(name, model) } : {}),
    });
  },
  // Tools through the chat template; embeddings from a second llama.cpp context in embeddings
  // mode on the same weights; no vision (node-llama-cpp 3.21 has no image input).
  // Rerank from a ranking context on the same weights, where the GGUF has a rank head (checked at load).
  capabilities: () => ({ tools: true, embeddings: true, vision: false, rerank: true }),
  local: { context: "per_sequence", threads: { cores: "math", auto: embeddedAutoThreads }, launchesServer: false },
  doctorChecks: ["model_file", "model_plan", "embedded_binary"],
  ports: () => [],
};
