import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { autoThreads } from "./auto-threads.js";
import { physicalCores } from "./cpu-cores.js";
import { EmbeddedEngine } from "./embedded/embedded-engine.js";
import type { LlamaRuntime } from "./embedded/llama-runtime.js";
import type { Engine } from "./engine.js";
import { ManagedEngine } from "./managed-engine.js";
import type { ModelFileSource } from "./model-file.js";
import { LlamaServerEngine } from "./llama-server/llama-server-engine.js";
import { OpenAiEngine } from "./openai/openai-engine.js";

export interface EngineFactoryDeps {
  config: Config;
  logger: Logger;
  llama: LlamaRuntime;
  /** Checks GGUF metadata before llama.cpp loads it. */
  validateModel?: (path: string) => Promise<void>;
  /** Where a model's GGUF is (a reference in `path` resolves to its download); the `path` itself by default. */
  modelFile?: ModelFileSource;
}

/** The engine for `llama.models.<name>`, chosen by its `engine` key. */
export function createEngine(name: string, deps: EngineFactoryDeps): Engine {
  const model = deps.config.llama.models[name];
  if (model === undefined) throw new RuntimeError("config_invalid", `No model "${name}" under llama.models`);
  const logger = deps.logger.child({ model: name });
  switch (model.engine) {
    case "embedded":
      return new EmbeddedEngine(name, model, {
        llama: deps.llama,
        logger,
        parallel: model.parallel,
        ...(deps.validateModel ? { validateModel: deps.validateModel } : {}),
        ...(deps.modelFile ? { modelFile: deps.modelFile(name, model) } : {}),
      });
    case "llama-server":
      return new LlamaServerEngine(name, model, {
        binary: deps.config.llama.binary,
        dataDir: deps.config.app.data_dir,
        logger,
        threads: model.threads === "auto" ? autoThreads("llama-server", physicalCores()) : model.threads,
        gpuLayers: model.gpu_layers === "auto" ? -1 : model.gpu_layers,
        parallel: model.parallel,
        ...(deps.modelFile ? { modelFile: deps.modelFile(name, model) } : {}),
      });
    case "openai":
      return new OpenAiEngine(name, model, { logger });
    default: {
      const unreachable: never = model.engine;
      throw new RuntimeError("config_invalid", `Unknown engine ${String(unreachable)}`);
    }
  }
}

/**
 * One engine per configured model, created on first use and closed together. Each is a
 * ManagedEngine: unloadable on request (`unload`) and after `idle_unload_s` without use.
 */
export class EngineRegistry {
  private readonly engines = new Map<string, ManagedEngine>();

  constructor(private readonly deps: EngineFactoryDeps) {}

  get(name: string): Engine {
    let engine = this.engines.get(name);
    if (engine === undefined) {
      const model = this.deps.config.llama.models[name];
      engine = new ManagedEngine(() => createEngine(name, this.deps), {
        idleUnloadMs: model?.idle_unload_s === null || model?.idle_unload_s === undefined ? null : model.idle_unload_s * 1000,
        logger: this.deps.logger,
      });
      this.engines.set(name, engine);
    }
    return engine;
  }

  /** Engines created so far, by model name. */
  created(): ReadonlyMap<string, Engine> {
    return this.engines;
  }

  /**
   * Frees the named model (or every loaded one) and returns the names that were loaded; an
   * unknown name is invalid_params; a model with requests running is `busy` (nothing is unloaded
   * then, not even the others).
   */
  async unload(name?: string): Promise<string[]> {
    if (name !== undefined && !(name in this.deps.config.llama.models)) {
      const known = Object.keys(this.deps.config.llama.models);
      throw new RuntimeError("invalid_params", `Unknown model "${name}"; configured models: ${known.length > 0 ? known.join(", ") : "none"}`, { details: { model: name, known } });
    }
    const targets = [...this.engines].filter(([model]) => name === undefined || model === name);
    const busy = targets.find(([, engine]) => engine.inFlight > 0);
    // All or nothing: the busy model's own refusal (busy, with its count) answers for the whole call.
    if (busy !== undefined) await busy[1].unload();
    const unloaded: string[] = [];
    for (const [model, engine] of targets) if (await engine.unload()) unloaded.push(model);
    return unloaded;
  }

  async closeAll(): Promise<void> {
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.allSettled(engines.map((engine) => engine.close()));
  }
}
