import type { EngineHealth } from "../../engine/engine.js";
import type { RuntimeHealth } from "../../diagnostics/runtime-health.js";

export type HealthStatus = "ok" | "starting" | "degraded" | "down";

export interface HealthBody {
  status: HealthStatus;
  engine: Record<string, unknown>;
  degradation_tier: string;
  version: string;
  models: Record<string, Record<string, unknown>>;
  tools: Record<string, Record<string, unknown>>;
  /** Chat turns and text completions running (see InFlightWork). */
  in_flight: number;
  warm_up?: string;
  /** llama.memory_budget and what the loaded models hold (bytes; the budget is null until the first load resolves it). */
  memory?: { budget_ram_bytes: number | null; budget_vram_bytes: number | null; used_ram_bytes: number; used_vram_bytes: number };
}

const engineJson = (health: EngineHealth): Record<string, unknown> => ({
  state: health.state,
  // What is loaded and the memory it holds (see EngineHealth.memoryBytes for what is counted).
  loaded: health.state === "ready" || health.state === "degraded",
  ...(health.memoryBytes === undefined ? {} : { memory_bytes: health.memoryBytes }),
  degradation_tier: health.degradationTier,
  ...(health.circuit === undefined ? {} : { circuit: health.circuit }),
  ...(health.detail === undefined ? {} : { detail: health.detail }),
  ...(health.info === undefined ? {} : { info: health.info }),
});

const NOT_STARTED: EngineHealth = { state: "stopped", degradationTier: "NORMAL" };

/**
 * /health's body from the runtime's facts. `ok` and `degraded` (serving, with a lower tier or a
 * failed MCP server) answer 200; `starting` (warm-up running) and `down` (warm-up failed, engine
 * down, circuit open) answer 503, so a probe waits for a server that can take turns.
 */
export function healthBody(health: RuntimeHealth, version: string, inFlight = 0): { status: 200 | 503; body: HealthBody } {
  const engine = health.engines[health.defaultModel] ?? NOT_STARTED;
  const toolsFailed = health.tools.some((t) => t.state === "failed" || t.state === "crashed");
  let status: HealthStatus;
  // A failed warm-up is retried by each chat: once the engine is up again, its state wins.
  const recovered = engine.state === "ready" || engine.state === "degraded";
  if ((health.warmUp === "failed" && !recovered) || engine.state === "down" || engine.circuit === "open") status = "down";
  else if (health.warmUp === "starting" || health.warmUp === "idle" || engine.state === "starting" || engine.state === "stopped") status = "starting";
  else if (engine.state === "degraded" || engine.degradationTier !== "NORMAL" || toolsFailed) status = "degraded";
  else status = "ok";
  const body: HealthBody = {
    status,
    engine: { model: health.defaultModel, ...engineJson(engine) },
    degradation_tier: engine.degradationTier,
    version,
    models: Object.fromEntries(Object.entries(health.engines).map(([name, h]) => [name, engineJson(h)])),
    tools: Object.fromEntries(health.tools.map((t) => [t.server, { state: t.state, tools: t.tools, pid: t.pid, ...(t.error === undefined ? {} : { error: t.error }) }])),
    in_flight: inFlight,
    ...(health.warmUpError === undefined ? {} : { warm_up: health.warmUpError }),
    ...(health.memory === undefined
      ? {}
      : {
          memory: {
            budget_ram_bytes: health.memory.budget?.ramBytes ?? null,
            budget_vram_bytes: health.memory.budget?.vramBytes ?? null,
            used_ram_bytes: health.memory.used.ramBytes,
            used_vram_bytes: health.memory.used.vramBytes,
          },
        }),
  };
  return { status: status === "ok" || status === "degraded" ? 200 : 503, body };
}

/** POSIX absolute paths (not the path part of a URL: a `/` right after a word, `:` or `/` is not a start) and Windows drive paths. */
const PATH_PATTERN = /(?<![\w:/.~-])\/(?:[^\s/"'(),;:]+\/)*[^\s/"'(),;:]+|\b[A-Za-z]:\\[^\s"'(),;]+/g;
/** A value that is a path as a whole (spaces allowed, as in "Application Support"). */
const WHOLE_PATH = /^(?:\/|[A-Za-z]:\\)[^\n]*$/;

/** Any string in the body with file paths replaced by `<path>`; other values unchanged. */
function redact(value: unknown): unknown {
  if (typeof value === "string") return WHOLE_PATH.test(value) ? "<path>" : value.replace(PATH_PATTERN, "<path>");
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redact(item)]));
  return value;
}

/** What a caller without the bearer token sees: the same body, no file paths (model files, binaries, data_dir). */
export function publicHealthBody(body: HealthBody): HealthBody {
  return redact(body) as HealthBody;
}
