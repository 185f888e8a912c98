import type { Logger } from "pino";
import type { Config } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import type { HelpProbe } from "../../engine/llama-server/help-probe.js";
import { resolveMemoryBudget } from "../../engine/scheduler/memory-budget.js";
import type { LlamaLoader } from "../../engine/llama/llama-loader.js";
import type { ModelInfoSource } from "../../engine/plan/plan-local-model.js";
import { planModel } from "../../engine/plan/plan-models.js";
import type { MemoryNeed } from "../../engine/scheduler/scheduler-types.js";

export interface ModelMemoryDeps {
  llama: LlamaLoader;
  logger: Logger;
  env: Readonly<Record<string, string | undefined>>;
  helpProbe: HelpProbe;
  modelInfo?: ModelInfoSource;
}

export interface ModelMemory {
  /** llama.memory_budget, `auto` resolved (once) from what is free less llama.memory_margin. */
  budget: () => Promise<MemoryNeed>;
  /** plan's estimate for the model as configured (weights, KV cache of all sequences, compute buffers). */
  estimate: (model: string) => Promise<MemoryNeed>;
}

/** The scheduler's figures, from plan: what the budget is and what each model needs. */
export function createModelMemory(config: Config, deps: ModelMemoryDeps): ModelMemory {
  const estimates = new Map<string, Promise<MemoryNeed>>();
  let budget: Promise<MemoryNeed> | undefined;
  // Asked at the first load, when a downloaded model served on demand may have joined the table.
  const hasLocal = (): boolean => Object.values(config.llama.models).some((model) => driverOf(model).local !== null);
  return {
    budget: () => (budget ??= resolveMemoryBudget(config, hasLocal() ? async () => (await deps.llama()).llama : null).then((resolved) => resolved.budget)),
    estimate: (name) => {
      let pending = estimates.get(name);
      if (pending === undefined) {
        pending = estimateModel(config, name, deps);
        estimates.set(name, pending);
        // A failure (node-llama-cpp did not start) is asked again next time.
        pending.catch(() => estimates.delete(name));
      }
      return pending;
    },
  };
}

async function estimateModel(config: Config, name: string, deps: ModelMemoryDeps): Promise<MemoryNeed> {
  const model = config.llama.models[name];
  // A model without local weights (an endpoint) holds nothing here.
  if (model === undefined || driverOf(model).local === null) return { ramBytes: 0, vramBytes: 0 };
  const entry = await planModel(name, config, {
    llama: deps.llama,
    logger: deps.logger,
    env: deps.env,
    checkBinary: false,
    helpProbe: deps.helpProbe,
    ...(deps.modelInfo ? { modelInfo: deps.modelInfo } : {}),
  });
  if (entry.plan === undefined) {
    // The load itself will say what is wrong (model_missing...); counted as nothing until it is measured.
    deps.logger.warn({ model: name, error: entry.error }, "no memory estimate for the model; the measured figure is used after its load");
    return { ramBytes: 0, vramBytes: 0 };
  }
  return { ramBytes: entry.plan.estimates.ramBytes, vramBytes: entry.plan.estimates.vramBytes };
}
