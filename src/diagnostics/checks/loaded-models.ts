import type { EngineHealth } from "../../engine/engine.js";
import { isLoaded } from "../../engine/managed-engine.js";
import type { CheckResult } from "../doctor-report.js";
import { ok } from "../check-result.js";
import { formatBytes } from "../../shared/format-bytes.js";

/**
 * What the serving process has loaded and the memory each model holds (only where doctor runs
 * inside a server: the stdio `doctor` method; `local-ai doctor` is a process of its own).
 */
export function checkLoadedModels(engines: Record<string, EngineHealth>): CheckResult {
  const loaded = Object.entries(engines).filter(([, health]) => isLoaded(health));
  const data = {
    models: Object.fromEntries(
      Object.entries(engines).map(([name, health]) => [name, { state: health.state, loaded: isLoaded(health), ...(health.memoryBytes === undefined ? {} : { memory_bytes: health.memoryBytes }) }]),
    ),
  };
  if (loaded.length === 0) return ok("models.loaded", "Loaded models", "no model is loaded in this process (models load on first use)", data);
  const parts = loaded.map(([name, health]) => `${name} (${health.memoryBytes === undefined ? "memory unknown" : formatBytes(health.memoryBytes)})`);
  const total = loaded.reduce((sum, [, health]) => sum + (health.memoryBytes ?? 0), 0);
  return ok("models.loaded", "Loaded models", `${parts.join(", ")}${loaded.length > 1 ? `; ${formatBytes(total)} in all` : ""}`, { ...data, total_bytes: total });
}
