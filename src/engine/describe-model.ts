import type { ModelConfig } from "../config/schema.js";
import { driverOf } from "./drivers/engine-drivers.js";
import type { ModelCapabilities } from "./drivers/engine-driver.js";
import type { Engine } from "./engine.js";
import type { EngineKind } from "../config/engine-kinds.js";

export interface ModelDescription {
  engine: EngineKind;
  /** The context in use once the model is loaded; before that, the configured ctx_size. */
  contextLength: number;
  capabilities: ModelCapabilities;
}

/** What a configured model can do, from its config alone (nothing is loaded or contacted): its driver says. */
export function describeModel(config: ModelConfig, engine?: Engine): ModelDescription {
  const loaded = engine?.contextLength?.() ?? null;
  return { engine: config.engine, contextLength: loaded ?? config.ctx_size, capabilities: driverOf(config).capabilities(config) };
}
