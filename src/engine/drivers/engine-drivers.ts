import type { ModelConfig } from "../../config/schema.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { EngineKind } from "../../config/engine-kinds.js";
import { embeddedDriver } from "./embedded-driver.js";
import type { EngineDriver } from "./engine-driver.js";
import { llamaServerDriver } from "./llama-server-driver.js";
import { openAiDriver } from "./openai-driver.js";

/** The one table of engine kinds: a new kind is a driver file and a line here (docs/engines.md). */
export const ENGINE_DRIVERS: Readonly<Record<EngineKind, EngineDriver>> = {
  embedded: embeddedDriver,
  "llama-server": llamaServerDriver,
  openai: openAiDriver,
};

/** The driver of a model (its `engine` key) or of a kind. */
export function driverOf(model: Pick<ModelConfig, "engine"> | EngineKind): EngineDriver {
  const kind = typeof model === "string" ? model : model.engine;
  const driver = (ENGINE_DRIVERS as Partial<Record<string, EngineDriver>>)[kind];
  if (driver === undefined) throw new RuntimeError("config_invalid", `Unknown engine ${String(kind)}`);
  return driver;
}
