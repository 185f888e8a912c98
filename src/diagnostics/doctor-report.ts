import type { MemoryUse } from "./runtime-health.js";
import type { ConfigState } from "../config/load-config.js";
import type { EngineHealth } from "../engine/engine.js";

export type CheckStatus = "ok" | "warn" | "fail";

/** One line of the doctor report: what was checked, what was found and, when not ok, the fix. */
export interface CheckResult {
  /** Stable machine id, e.g. `node`, `config`, `model.default.file`. */
  id: string;
  title: string;
  status: CheckStatus;
  /** One line, plain words. */
  finding: string;
  /** How to fix it; present whenever status is not ok. */
  fix?: string;
  data?: Record<string, unknown>;
}

export interface DoctorReport {
  ok: boolean;
  summary: Record<CheckStatus, number>;
  checks: CheckResult[];
  version: string;
  generated_at: string;
}

/** Everything the checks read, injected so tests can point them at fixtures. */
export interface DoctorContext {
  configState: ConfigState;
  version: string;
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
  /** The engines of the serving process, when doctor runs inside one (the stdio method): adds `models.loaded`. */
  loadedModels?: () => Record<string, EngineHealth>;
  /** The serving process's memory budget and its use (with loadedModels). */
  memoryUse?: () => MemoryUse | undefined;
}
