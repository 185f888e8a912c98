import { createHash } from "node:crypto";
import path from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { isSafeId } from "../shared/safe-id.js";
import { autoThreads } from "./auto-threads.js";
import { physicalCores } from "./cpu-cores.js";
import type { LlamaRuntime } from "./embedded/llama-runtime.js";
import type { Engine } from "./engine.js";

export interface EngineFactoryDeps {
  config: Config;
  logger: Logger;
  llama: LlamaRuntime;
  /** Checks GGUF metadata before llama.cpp loads it. */
  validateModel?: (path: string) => Promise<void>;
}

/**
 * The engine for `llama.models.<name>`, chosen by its `engine` key. Each implementation is
 * imported when its first model is created (cold start: the openai client, which the llama-server
 * and openai engines speak through, and node-llama-cpp's wrappers load only for a model that uses them).
 */
export async function createEngine(name: string, deps: EngineFactoryDeps): Promise<Engine> {
  const model = deps.config.llama.models[name];
  if (model === undefined) throw new RuntimeError("config_invalid", `No model "${name}" under llama.models`);
  const logger = deps.logger.child({ model: name });
  switch (model.engine) {
    case "embedded": {
      const { EmbeddedEngine } = await import("./embedded/embedded-engine.js");
      return new EmbeddedEngine(name, model, {
        llama: deps.llama,
        logger,
        parallel: model.parallel,
        kvCache: { dir: kvCacheDir(deps.config.app.data_dir, name), diskBytes: model.kv_cache_disk_bytes },
        ...(deps.validateModel ? { validateModel: deps.validateModel } : {}),
      });
    }
    case "llama-server": {
      const { LlamaServerEngine } = await import("./llama-server/llama-server-engine.js");
      return new LlamaServerEngine(name, model, {
        binary: deps.config.llama.binary,
        dataDir: deps.config.app.data_dir,
        logger,
        threads: model.threads === "auto" ? autoThreads("llama-server", physicalCores()) : model.threads,
        gpuLayers: model.gpu_layers === "auto" ? -1 : model.gpu_layers,
        parallel: model.parallel,
      });
    }
    case "openai": {
      const { OpenAiEngine } = await import("./openai/openai-engine.js");
      return new OpenAiEngine(name, model, { logger });
    }
    default: {
      const unreachable: never = model.engine;
      throw new RuntimeError("config_invalid", `Unknown engine ${String(unreachable)}`);
    }
  }
}

/** `<data_dir>/kv-cache/<model name>`; a name that is not a safe folder name is hashed. */
export function kvCacheDir(dataDir: string, modelName: string): string {
  const folder = isSafeId(modelName) ? modelName : `model-${createHash("sha256").update(modelName).digest("hex").slice(0, 16)}`;
  return path.join(dataDir, "kv-cache", folder);
}

/** One engine per configured model, created on first use (concurrent callers share it) and closed together. */
export class EngineRegistry {
  private readonly engines = new Map<string, Engine>();
  private readonly creating = new Map<string, Promise<Engine>>();

  constructor(private readonly deps: EngineFactoryDeps) {}

  get(name: string): Promise<Engine> {
    const engine = this.engines.get(name);
    if (engine !== undefined) return Promise.resolve(engine);
    let pending = this.creating.get(name);
    if (pending === undefined) {
      pending = createEngine(name, this.deps);
      this.creating.set(name, pending);
      // Registered before any caller's continuation, so a caller finds the engine in created().
      // A failed creation (an unknown model, a config error) may be asked again.
      pending.then(
        (created) => {
          this.engines.set(name, created);
          this.creating.delete(name);
        },
        () => this.creating.delete(name),
      );
    }
    return pending;
  }

  /** Engines created so far, by model name. */
  created(): ReadonlyMap<string, Engine> {
    return this.engines;
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.creating.values()]);
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.allSettled(engines.map((engine) => engine.close()));
  }
}
