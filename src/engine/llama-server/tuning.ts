// Every timing and threshold of the supervisor in one place, with the production defaults.
// Users set the restart backoff and the circuit breaker (llama.restart); tests shrink the rest.
import type { RestartConfig } from "../../config/schema.js";
import { DEFAULT_BACKOFF_OPTIONS, type BackoffOptions } from "./backoff.js";
import { DEFAULT_BREAKER_OPTIONS, type CircuitBreakerOptions } from "../circuit-breaker.js";

export interface SupervisorTuning {
  /** Startup fails after this long without log output or readiness. */
  startupIdleTimeoutMs: number;
  maxStartupMs: number;
  /** TERM to KILL. */
  stopGraceMs: number;
  healthIntervalMs: number;
  healthTimeoutMs: number;
  /** Consecutive failed health checks that get a live but unresponsive server restarted. */
  healthFailuresBeforeRestart: number;
  /** Ready this long before a crash: the crash starts a fresh backoff sequence. */
  stableAfterMs: number;
  breaker: CircuitBreakerOptions;
  backoff: BackoffOptions;
}

export const DEFAULT_SUPERVISOR_TUNING: SupervisorTuning = {
  startupIdleTimeoutMs: 60_000,
  maxStartupMs: 30 * 60_000,
  stopGraceMs: 3000,
  healthIntervalMs: 5000,
  healthTimeoutMs: 3000,
  healthFailuresBeforeRestart: 3,
  stableAfterMs: 30_000,
  breaker: { ...DEFAULT_BREAKER_OPTIONS },
  backoff: { ...DEFAULT_BACKOFF_OPTIONS },
};

/** The part of the tuning a user sets: `llama.restart` (docs/config.md). */
export function restartTuning(restart: RestartConfig): Pick<SupervisorTuning, "breaker" | "backoff"> {
  return {
    breaker: { failureThreshold: restart.circuit_failures, windowMs: restart.circuit_window_ms, cooldownMs: restart.circuit_cooldown_ms },
    backoff: { ...DEFAULT_BACKOFF_OPTIONS, initialMs: restart.backoff_initial_ms, maxMs: restart.backoff_max_ms },
  };
}
