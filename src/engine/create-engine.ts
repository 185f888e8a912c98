import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { MetricsRecorder } from "../shared/metrics-recorder.js";
import type { LlamaRuntime } from "./embedded/llama-runtime.js";
import { driverOf } from "./drivers/engine-drivers.js";
import type { Engine } from "./engine.js";
import { ManagedEngine } from "./scheduler/managed-engine.js";
import { psReport, type PsReport } from "./scheduler/model-ps.js";
import { ModelScheduler } from "./scheduler/model-scheduler.js";
import type { MemoryNeed, SchedulerClock } from "./scheduler/scheduler-types.js";
import type { ModelFileSource } from "./model-file.js";
import { ChildRegistry } from "../shared/process/child-registry.js";
import { HelpProbe } from "./llama-server/help-probe.js";

export interface EngineFactoryDeps {
  config: Config;
  logger: Logger;
  llama: LlamaRuntime;
  /** Checks GGUF metadata before llama.cpp loads it. */
  validateModel?: (path: string) => Promise<void>;
  /** Where a model's GGUF is (a reference in `path` resolves to its download); the `path` itself by default. */
  modelFile?: ModelFileSource;
  /** The runtime's child processes (llama-server groups); the registry makes its own without one. */
  children?: ChildRegistry;
  /** The runtime's llama-server flag cache; the registry makes its own without one. */
  helpProbe?: HelpProbe;
  /** The budget and each model's estimate (the runtime plans them); without it nothing is limited. */
  memory?: { budget: () => Promise<MemoryNeed>; estimate: (model: string) => Promise<MemoryNeed> };
  clock?: SchedulerClock;
  /** Queue waits and load durations (docs/operations.md); none reported without it. */
  metrics?: MetricsRecorder;
}

const UNLIMITED: MemoryNeed = { ramBytes: Number.MAX_SAFE_INTEGER, vramBytes: Number.MAX_SAFE_INTEGER };

/** What createEngine needs: the factory deps with the registry's child registry and flag cache. */
export type EngineDeps = EngineFactoryDeps & Required<Pick<EngineFactoryDeps, "children" | "helpProbe">>;

/**
 * The engine for `llama.models.<name>`, built by the driver of its `engine` key
 * (drivers/engine-drivers.ts). Each implementation is imported when its first model is created
 * (cold start: the openai client, which the llama-server and openai engines speak through, and
 * node-llama-cpp's wrappers load only for a model that uses them).
 */
export async function createEngine(name: string, deps: EngineDeps): Promise<Engine> {
  const model = deps.config.llama.models[name];
  if (model === undefined) throw new RuntimeError("config_invalid", `No model "${name}" under llama.models`);
  return driverOf(model).create(name, model, { ...deps, logger: deps.logger.child({ model: name }) });
}

/**
 * One engine per configured model, created on first use (concurrent callers share it) and closed
 * together. Each is a ManagedEngine: unloadable on request (`unload`) and after `idle_unload_s`
 * without use. After closeAll() nothing new is created: a late caller gets `shutting_down`
 * instead of an engine on a disposed node-llama-cpp instance.
 */
export class EngineRegistry {
  private readonly engines = new Map<string, ManagedEngine>();
  private readonly creating = new Map<string, Promise<ManagedEngine>>();
  private closed = false;
  private readonly deps: EngineDeps;
  /** Every model's loads go through it (docs/models.md, "Memory budget"). */
  readonly scheduler: ModelScheduler;

  constructor(deps: EngineFactoryDeps) {
    this.deps = { ...deps, children: deps.children ?? new ChildRegistry(), helpProbe: deps.helpProbe ?? new HelpProbe() };
    const { load_queue: queue } = deps.config.llama;
    this.scheduler = new ModelScheduler({
      budget: deps.memory?.budget ?? (() => Promise.resolve(UNLIMITED)),
      estimate: deps.memory?.estimate ?? (() => Promise.resolve({ ramBytes: 0, vramBytes: 0 })),
      queue: { length: queue.length, timeoutMs: queue.timeout_s * 1000 },
      logger: deps.logger.child({ component: "scheduler" }),
      ...(deps.clock ? { clock: deps.clock } : {}),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    });
  }

  get(name: string): Promise<Engine> {
    if (this.closed) return Promise.reject(new RuntimeError("shutting_down", "The server is shutting down; no model is loaded any more"));
    const engine = this.engines.get(name);
    if (engine !== undefined) return Promise.resolve(engine);
    let pending = this.creating.get(name);
    if (pending === undefined) {
      const model = this.deps.config.llama.models[name];
      const idle = model?.idle_unload_s ?? this.deps.config.llama.idle_unload_s;
      const options = { idleUnloadMs: idle === null ? null : idle * 1000, logger: this.deps.logger, scheduler: this.scheduler, pinned: model?.pin === true, ...(this.deps.metrics ? { metrics: this.deps.metrics } : {}) };
      pending = createEngine(name, this.deps).then((first) => new ManagedEngine(first, () => createEngine(name, this.deps), options));
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

  /** Every configured model's state and memory, and the budget (stdio `ps`, GET /v1/ps). */
  ps(): Promise<PsReport> {
    return psReport(this.deps.config, this.engines, this.scheduler, this.deps.memory?.estimate ?? (() => Promise.resolve({ ramBytes: 0, vramBytes: 0 })));
  }

  /** Engines created so far, by model name. */
  created(): ReadonlyMap<string, ManagedEngine> {
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
    await Promise.allSettled([...this.creating.values()]);
    const targets = [...this.engines].filter(([model]) => name === undefined || model === name);
    const busy = targets.find(([, engine]) => engine.inFlight > 0);
    // All or nothing: the busy model's own refusal (busy, with its count) answers for the whole call.
    if (busy !== undefined) await busy[1].unload();
    const unloaded: string[] = [];
    for (const [model, engine] of targets) if (await engine.unload()) unloaded.push(model);
    return unloaded;
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.creating.values()]);
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.allSettled(engines.map((engine) => engine.close()));
  }
}
