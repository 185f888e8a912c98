import type { EngineDriver } from "./engine-driver.js";

/** An OpenAI-compatible endpoint elsewhere: nothing is loaded here, so nothing to plan or count. */
export const openAiDriver: EngineDriver = {
  kind: "openai",
  async create(name, model, deps) {
    const { OpenAiEngine } = await import("../openai/openai-engine.js");
    return new OpenAiEngine(name, model, { logger: deps.logger });
  },
  // Everything is passed through; the upstream decides, and refuses with a 400.
  capabilities: () => ({ tools: true, embeddings: true, vision: true, rerank: true }),
  local: null,
  doctorChecks: ["model_endpoint"],
  ports: () => [],
};
