import type { Config } from "../../config/schema.js";
import type { EngineKind } from "../../config/engine-kinds.js";
import { isLoaded, type ManagedEngine } from "./managed-engine.js";
import type { ModelScheduler } from "./model-scheduler.js";
import type { MemoryNeed } from "./scheduler-types.js";

export type ModelRunState = "loaded" | "loading" | "queued" | "unloaded" | "failed";

/** One model as `ps` shows it (stdio `ps`, GET /v1/ps, GET /v1/models). */
export interface ModelPsEntry {
  name: string;
  engine: EngineKind;
  status: ModelRunState;
  /** What it holds (loaded: the accounted figure, `measured` once corrected from the engine's own), or would need (plan's estimate). */
  memory: { ram_bytes: number; vram_bytes: number; measured: boolean };
  /** When idle_unload_s unloads it (ISO 8601), or null. */
  expires_at: string | null;
  pinned: boolean;
  in_flight: number;
}

export interface PsReport {
  budget: { ram_bytes: number; vram_bytes: number; used_ram_bytes: number; used_vram_bytes: number };
  models: ModelPsEntry[];
}

/** Every configured model, loaded or not, and the budget with what the loaded ones use of it. */
export async function psReport(config: Config, engines: ReadonlyMap<string, ManagedEngine>, scheduler: ModelScheduler, estimate: (model: string) => Promise<MemoryNeed>): Promise<PsReport> {
  const budget = await scheduler.budgetNow();
  const used = scheduler.used();
  const models = await Promise.all(
    Object.entries(config.llama.models).map(async ([name, model]): Promise<ModelPsEntry> => {
      const engine = engines.get(name);
      const reservation = engine?.accounted() ?? null;
      const status = stateOf(engine);
      const need = reservation?.need ?? (await estimate(name).catch(() => ({ ramBytes: 0, vramBytes: 0 })));
      const expires = engine?.expiresAt() ?? null;
      return {
        name,
        engine: model.engine,
        status,
        memory: { ram_bytes: need.ramBytes, vram_bytes: need.vramBytes, measured: reservation?.measured ?? false },
        expires_at: expires === null ? null : new Date(expires).toISOString(),
        pinned: model.pin,
        in_flight: engine?.inFlight ?? 0,
      };
    }),
  );
  return { budget: { ram_bytes: budget.ramBytes, vram_bytes: budget.vramBytes, used_ram_bytes: used.ramBytes, used_vram_bytes: used.vramBytes }, models };
}

function stateOf(engine: ManagedEngine | undefined): ModelRunState {
  if (engine === undefined) return "unloaded";
  if (engine.queued) return "queued";
  const health = engine.health();
  if (isLoaded(health)) return "loaded";
  if (health.state === "down") return "failed";
  if (health.state === "starting" || engine.accounted() !== null) return "loading";
  return "unloaded";
}
