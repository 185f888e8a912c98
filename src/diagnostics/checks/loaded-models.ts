import type { EngineHealth } from "../../engine/engine.js";
import { isLoaded } from "../../engine/scheduler/managed-engine.js";
import type { CheckResult } from "../doctor-report.js";
import type { MemoryUse } from "../runtime-health.js";
import { ok } from "../check-result.js";
import { formatBytes } from "../../shared/format-bytes.js";

/**
 * What the serving process has loaded and the memory each model holds (only where doctor runs
 * inside a server: the stdio `doctor` method; `local-ai doctor` is a process of its own).
 */
export function checkLoadedModels(engines: Record<string, EngineHealth>, memory?: MemoryUse): CheckResult {
  const loaded = Object.entries(engines).filter(([, health]) => isLoaded(health));
  const budget = memory?.budget ?? null;
  const use =
    memory === undefined
      ? {}
      : { budget: { ram_bytes: budget?.ramBytes ?? null, vram_bytes: budget?.vramBytes ?? null, used_ram_bytes: memory.used.ramBytes, used_vram_bytes: memory.used.vramBytes } };
  const budgetText = budget === null ? "" : `; budget: ${formatBytes(memory?.used.ramBytes ?? 0)} of ${formatBytes(budget.ramBytes)} RAM, ${formatBytes(memory?.used.vramBytes ?? 0)} of ${formatBytes(budget.vramBytes)} VRAM in use`;
  const data = {
    ...use,
    models: Object.fromEntries(
      Object.entries(engines).map(([name, health]) => [name, { state: health.state, loaded: isLoaded(health), ...(health.memoryBytes === undefined ? {} : { memory_bytes: health.memoryBytes }) }]),
    ),
  };
  if (loaded.length === 0) return ok("models.loaded", "Loaded models", `no model is loaded in this process (models load on first use)${budgetText}`, data);
  const parts = loaded.map(([name, health]) => `${name} (${health.memoryBytes === undefined ? "memory unknown" : formatBytes(health.memoryBytes)})`);
  const total = loaded.reduce((sum, [, health]) => sum + (health.memoryBytes ?? 0), 0);
  return ok("models.loaded", "Loaded models", `${parts.join(", ")}${loaded.length > 1 ? `; ${formatBytes(total)} in all` : ""}${budgetText}`, { ...data, total_bytes: total });
}
