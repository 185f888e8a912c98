import type { Logger } from "pino";
import type { DoctorReport } from "../../diagnostics/doctor-report.js";
import type { ModelPlanReport } from "../../engine/plan/plan-types.js";
import type { PsReport } from "../../engine/scheduler/model-ps.js";
import type { SessionRunner } from "../../agent/session-runner.js";
import type { MethodDefinition, MethodTable } from "../method.js";
import type { MetricsRecorder } from "../../shared/metrics-recorder.js";
import type { StdioControl } from "../stdio-server.js";
import { CANCEL_NOTIFICATION, cancelRequestMethod } from "./cancel-request.js";
import { cancelMethod } from "./cancel.js";
import { chatMethod } from "./chat.js";
import { doctorMethod } from "./doctor.js";
import { initializeMethod } from "./initialize.js";
import { pingMethod } from "./ping.js";
import { planMethod, type PlanSelection } from "./plan.js";
import { shutdownMethod } from "./shutdown.js";
import { pullMethod, type PullService } from "./pull.js";
import { psMethod } from "./ps.js";
import { metricsMethod, type MetricsSnapshot } from "./metrics.js";
import { detokenizeMethod, tokenizeMethod, type TokenizerService } from "./tokenize.js";
import { unloadMethod } from "./unload.js";
import { warmUpMethod } from "./warm-up.js";
import { mcpPromptsMethod, mcpResourcesMethod } from "./mcp-lists.js";

/** What the v1 methods need from the runtime (the composition root provides it). */
export interface V1Services {
  server: { name: string; version: string };
  maxLineBytes: number;
  /** stdio.coalesce_ms: the merge window for a chat's text deltas (0 = off). */
  coalesceMs?: number;
  /** `log`: the call's logger (its req_id), for the lines of the work the call sets going. */
  runDoctor(signal: AbortSignal, log: Logger): Promise<DoctorReport>;
  runPlan(params: PlanSelection, signal: AbortSignal, log: Logger): Promise<ModelPlanReport>;
  /** Throws (or rejects with) config_missing / config_invalid when there is no valid config; may build the runtime first. */
  sessionRunner(): SessionRunner | Promise<SessionRunner>;
  /** `pull`: a model into app.models_dir (needs a valid config). */
  pull: PullService;
  /** `unload`: frees loaded models; resolves with the names that were loaded (needs a valid config). */
  unload(model: string | undefined): Promise<string[]>;
  /** `ps`: the budget and every configured model's state (needs a valid config). */
  ps(): Promise<PsReport>;
  /** `metrics`: the server's metrics snapshot (absent: the method answers an empty one). */
  metrics?(): Promise<MetricsSnapshot>;
  /** Where `chat` calls are counted (the runtime's recorder); absent: they are not. */
  metricsRecorder?: () => Promise<MetricsRecorder>;
  /** `tokenize` / `detokenize`: a model's tokenizer (needs a valid config). */
  tokenizer(): Promise<TokenizerService>;
}

/**
 * The stdio method table, shared by both stdio dialects (v1 and JSON-RPC speak the same methods).
 * New methods are added here and nowhere else. JSON-RPC also gets `$/cancelRequest`.
 */
export function createV1Methods(services: V1Services, control: StdioControl, wire: "v1" | "jsonrpc" = "v1"): MethodTable {
  const table = new Map<string, MethodDefinition<never>>();
  // `$/` names are protocol notifications, not methods a host calls for a result.
  const methods = (): string[] => [...table.keys()].filter((name) => !name.startsWith("$/"));
  table.set("initialize", initializeMethod({ server: services.server, methods, maxLineBytes: services.maxLineBytes, wire }));
  table.set("ping", pingMethod);
  table.set("doctor", doctorMethod((signal, log) => services.runDoctor(signal, log)));
  table.set("plan", planMethod((params, signal, log) => services.runPlan(params, signal, log)));
  table.set("chat", chatMethod(() => services.sessionRunner(), services.coalesceMs ?? 0, services.metricsRecorder));
  table.set("cancel", cancelMethod(control));
  table.set("warm_up", warmUpMethod(() => services.sessionRunner()));
  table.set("pull", pullMethod(services.pull));
  table.set("unload", unloadMethod((model) => services.unload(model)));
  table.set("ps", psMethod(() => services.ps()));
  table.set("metrics", metricsMethod(() => services.metrics?.() ?? Promise.resolve({ metrics: [] })));
  table.set("mcp_prompts", mcpPromptsMethod(() => services.sessionRunner()));
  table.set("mcp_resources", mcpResourcesMethod(() => services.sessionRunner()));
  table.set("tokenize", tokenizeMethod(() => services.tokenizer()));
  table.set("detokenize", detokenizeMethod(() => services.tokenizer()));
  table.set("shutdown", shutdownMethod(control));
  if (wire === "jsonrpc") table.set(CANCEL_NOTIFICATION, cancelRequestMethod(control));
  return table;
}
