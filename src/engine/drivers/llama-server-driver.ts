import { llamaServerAutoThreads } from "../auto-threads.js";
import { physicalCores } from "../cpu-cores.js";
import { embeddingsEnabled, rerankEnabled, visionEnabled } from "../llama-server/server-features.js";
import { LLAMA_SERVER_HOST } from "../llama-server/server-args.js";
import type { EngineDriver } from "./engine-driver.js";

/** A supervised llama-server child on loopback: one context of ctx_size shared by its slots. */
export const llamaServerDriver: EngineDriver = {
  kind: "llama-server",
  async create(name, model, deps) {
    const [{ LlamaServerEngine }, { restartTuning }] = await Promise.all([import("../llama-server/llama-server-engine.js"), import("../llama-server/tuning.js")]);
    return new LlamaServerEngine(name, model, {
      binary: deps.config.llama.binary,
      dataDir: deps.config.app.data_dir,
      logger: deps.logger,
      threads: model.threads === "auto" ? llamaServerAutoThreads(physicalCores()) : model.threads,
      gpuLayers: model.gpu_layers === "auto" ? -1 : model.gpu_layers,
      parallel: model.parallel,
      tuning: restartTuning(deps.config.llama.restart),
      children: deps.children,
      helpProbe: deps.helpProbe,
      ...(deps.modelFile ? { modelFile: deps.modelFile(name, model) } : {}),
    });
  },
  // Tools through --jinja; embeddings only with --embeddings in extra_args (opt-in: older
  // llama.cpp builds refuse chat in embeddings mode); vision only with a projector (--mmproj).
  // Rerank only when launched with --reranking (llama.models.<name>.rerank).
  capabilities: (model) => ({ tools: true, embeddings: embeddingsEnabled(model), vision: visionEnabled(model), rerank: rerankEnabled(model) }),
  local: { context: "shared", threads: { cores: "physical", auto: llamaServerAutoThreads }, launchesServer: true },
  doctorChecks: ["model_file", "model_plan", "llama_server_binary", "llama_server_processes"],
  ports: (name, model) => [{ host: LLAMA_SERVER_HOST, port: model.port, key: `llama.models.${name}.port`, owner: `the llama-server of model ${name}` }],
};
