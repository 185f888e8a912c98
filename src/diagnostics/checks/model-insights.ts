import type { Config } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import type { DownloadSettings } from "../../models/download-settings.js";
import { inspectModelFile } from "../../models/inspect-model-file.js";
import { modelInfoIn } from "../../models/model-files.js";
import type { LlamaLoader } from "../../engine/llama/llama-loader.js";
import { formatParams } from "../../engine/plan/plan-alternatives.js";
import { modelFactsJson, planEstimatesJson } from "../../engine/plan/plan-json.js";
import { planModels } from "../../engine/plan/plan-models.js";
import type { HardwareSnapshot, ModelFacts, ModelPlanEntry } from "../../engine/plan/plan-types.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, firstLine, ok } from "../check-result.js";
import { checkMemoryBudget } from "./memory-budget.js";

export interface ModelInsightsCheckOptions {
  llama: LlamaLoader;
  env: Readonly<Record<string, string | undefined>>;
  /** models_dir and the environment, to find the download of a reference in `path`. */
  settings: DownloadSettings;
  signal?: AbortSignal;
  /** Plan for this machine instead of the real one (tests). */
  hardware?: HardwareSnapshot;
}

/**
 * `model.<name>.plan` for every local model: what the GGUF is (architecture, parameters,
 * quantization, trained context) and whether it fits this machine, with the plan's reason or the
 * plan error and what would fit. A file that is missing, not downloaded, unusable or truncated is
 * left to the `model.<name>` check, which already says so; the binary to `llama_server.binary`.
 * Then `memory.budget`, from the same plans (memory-budget.ts).
 */
export async function checkModelInsights(config: Config, options: ModelInsightsCheckOptions): Promise<CheckResult[]> {
  const local = Object.entries(config.llama.models).filter(([, model]) => driverOf(model).doctorChecks.includes("model_plan") && model.path !== null);
  const readable = await Promise.all(
    local.map(async ([name, model]) => ((await inspectModelFile(name, model, options.settings, options.signal).then(() => true, () => false)) ? name : null)),
  );
  const names = new Set(readable.filter((name): name is string => name !== null));
  if (names.size === 0) return [await checkMemoryBudget(config, [], options.llama)];
  const models = Object.fromEntries(Object.entries(config.llama.models).filter(([name]) => names.has(name)));
  const report = await planModels(
    { ...config, llama: { ...config.llama, models } },
    {
      llama: options.llama,
      env: options.env,
      checkBinary: false,
      modelInfo: modelInfoIn(options.settings),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.hardware ? { hardware: options.hardware } : {}),
    },
  );
  return [...report.models.map(toCheck), await checkMemoryBudget(config, report.models, options.llama)];
}

function toCheck(entry: ModelPlanEntry): CheckResult {
  const id = `model.${entry.name}.plan`;
  const title = `Plan of model ${entry.name}`;
  const key = `llama.models.${entry.name}`;
  const facts = entry.model === undefined ? "" : `${describeFacts(entry.model)}; `;
  const data: Record<string, unknown> = { engine: entry.engine, ...(entry.model ? { model: modelFactsJson(entry.model) } : {}) };
  if (entry.status === "ok" && entry.plan !== undefined) {
    const { plan } = entry;
    const notes = plan.notes.length > 0 ? ` (${plan.notes.join("; ")})` : "";
    return ok(id, title, `${facts}${plan.reason}${notes}`, { ...data, gpu_layers: plan.gpuLayers, total_layers: plan.totalLayers, ctx_size: plan.ctxSize, threads: plan.threads, estimates: planEstimatesJson(plan.estimates) });
  }
  const error = entry.error ?? { code: "internal_error" as const, message: "no plan and no error" };
  const withCode = { ...data, code: error.code, ...(error.details ? { details: error.details } : {}) };
  if (error.code === "model_plan_error") {
    // The message is "<numbers>. What would fit: <alternatives>."; the fix line gets the second part.
    const [numbers, alternatives] = error.message.split(" What would fit: ");
    return fail(id, title, `${facts}${numbers ?? error.message}`, alternatives !== undefined ? `what would fit: ${alternatives}` : "use a smaller model or a machine with more memory", withCode);
  }
  if (error.code === "model_missing") {
    return fail(id, title, `${facts}${firstLine(error.message)}`, `get a complete GGUF of this model (or re-convert it with llama.cpp's convert_hf_to_gguf.py) and set ${key}.path to it`, withCode);
  }
  if (error.code === "engine_unavailable") {
    return fail(id, title, firstLine(error.message), "reinstall local-ai's dependencies (`npm ci`) so node-llama-cpp's prebuilt binaries are present", withCode);
  }
  return fail(id, title, `${facts}${firstLine(error.message)}`, `run \`local-ai plan --model ${entry.name}\` for details`, withCode);
}

/** "llama, 7.2B params, Q4_K_M, trained ctx 32768" */
export function describeFacts(facts: ModelFacts): string {
  return `${facts.architecture}, ${formatParams(facts.parameters)} params, ${facts.quantization}, trained ctx ${facts.trainContextSize ?? "unknown"}`;
}
