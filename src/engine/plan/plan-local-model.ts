import type { GgufFileInfo } from "node-llama-cpp";
import type { Logger } from "pino";
import type { Config, ModelConfig } from "../../config/schema.js";
import { findExecutable } from "../../shared/process/find-executable.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { LocalWeights } from "../drivers/engine-driver.js";
import type { HelpProbe } from "../llama-server/help-probe.js";
import { BASELINE_SUPPORTED_FLAGS, buildServerArgs } from "../llama-server/server-args.js";
import { decidePlan, type PlanDecision } from "./decide-plan.js";
import { createInsightsEstimator } from "./insights-estimator.js";
import type { LlamaHandle, LlamaLoader } from "../llama/llama-loader.js";
import type { HardwareSnapshot, ModelFacts, ModelPlan } from "./plan-types.js";
import { validateGguf } from "./validate-gguf.js";

/** Shown instead of the real key: a new one is made for every launch and never printed. */
export const API_KEY_PLACEHOLDER = "<per-launch key>";
/** Binaries that list --api-key-file get the key in a file (mode 600, removed once ready), never on the command line. */
export const API_KEY_FILE_PLACEHOLDER = "<per-launch key file>";

/** A model's GGUF metadata and the file it is (or will be) in; throws RuntimeError (model_missing...). */
export type ModelInfoSource = (name: string, model: ModelConfig, signal?: AbortSignal) => Promise<{ info: GgufFileInfo; path: string }>;

/**
 * The default source: the file at the model's `path`, checked by validateGguf (header, metadata,
 * every tensor's data present), with the error naming the setting that points at the file.
 */
export const localModelInfo: ModelInfoSource = async (name, model, signal) => {
  const key = `llama.models.${name}`;
  const path = model.path;
  if (path === null) throw new RuntimeError("config_invalid", `${key}.path is required for engine "${model.engine}"`, { details: { config_key: `${key}.path` } });
  const info = await validateGguf(path, signal ? { signal } : {}).catch((error: unknown) => {
    if (error instanceof RuntimeError && error.code === "model_missing") {
      throw new RuntimeError("model_missing", `${key}.path: ${error.message}`, { details: { ...error.details, config_key: `${key}.path` }, cause: error });
    }
    throw error;
  });
  return { info, path };
};

/** What planning one local model needs; shared by all models of one report. */
export interface LocalPlanContext {
  /** Where each model's GGUF metadata comes from (a local file, a downloaded reference, a remote header). */
  modelInfo: ModelInfoSource;
  config: Config;
  llama: LlamaLoader;
  hardware(): Promise<HardwareSnapshot>;
  env: Readonly<Record<string, string | undefined>>;
  logger?: Logger;
  signal?: AbortSignal;
  /** Look up llama.binary and build the command line (doctor skips both: it checks the binary itself). */
  checkBinary: boolean;
  /** Overrides every model's `parallel` (chats generating at once: embedded sequences, llama-server slots). */
  parallel?: number;
  /** Reads which flags the llama-server binary has (the command line shown is the engine's own). */
  helpProbe: HelpProbe;
}

/**
 * One model with local weights (its driver's `local`: embedded, llama-server): file and metadata
 * checks, then the memory decision, then (a kind that launches llama-server) the exact command
 * line. Throws RuntimeError: model_missing, binary_missing, model_plan_error, engine_unavailable.
 */
export async function planLocalModel(
  name: string,
  model: ModelConfig,
  local: LocalWeights,
  context: LocalPlanContext,
  /** Told what the GGUF says as soon as it is known, so a failed plan can still report it. */
  onFacts?: (facts: ModelFacts) => void,
): Promise<{ facts: ModelFacts; plan: ModelPlan }> {
  const { info, path } = await context.modelInfo(name, model, context.signal);

  let binaryPath: string | undefined;
  if (local.launchesServer && context.checkBinary) {
    const lookup = await findExecutable(context.config.llama.binary, context.env);
    if (!lookup.found) {
      throw new RuntimeError(
        "binary_missing",
        `llama.binary: ${lookup.reason}; model ${name} needs llama-server: install llama.cpp's llama-server or set llama.binary to its path (\`npm run build:llama-server\` builds one from the bundled source)`,
        { details: { binary: context.config.llama.binary, config_key: "llama.binary" } },
      );
    }
    binaryPath = lookup.path;
  }

  const parallel = context.parallel ?? model.parallel;
  const handle = await loadOrExplain(context.llama);
  context.signal?.throwIfAborted();
  const hardware = await context.hardware();
  const estimator = await createInsightsEstimator(info, handle, {
    sequences: parallel,
    ctxMode: local.context,
  });
  onFacts?.(estimator.facts);
  const decision = await decidePlan(estimator, hardware, {
    modelName: name,
    gpuLayers: model.gpu_layers,
    ctxSize: model.ctx_size,
    threads: model.threads,
    sequences: parallel,
    sharedContext: local.context === "shared",
    engine: model.engine,
  });
  const plan: ModelPlan = {
    gpuLayers: decision.gpuLayers,
    totalLayers: decision.totalLayers,
    ctxSize: decision.ctxSize,
    threads: decision.threads,
    estimates: decision.estimates,
    reason: decision.reason,
    notes: decision.notes,
  };
  if (binaryPath !== undefined) plan.command = await serverCommand(binaryPath, path, { ...model, parallel }, decision, context);
  return { facts: estimator.facts, plan };
}

/** Exactly what the llama-server engine would launch for this plan, from the same builder. */
async function serverCommand(binary: string, modelPath: string, model: ModelConfig, decision: PlanDecision, context: LocalPlanContext): Promise<string[]> {
  // A binary whose --help cannot be read still gets the baseline flags, as the engine does.
  const supportedFlags = await context.helpProbe.supportedFlags(binary, context.logger).catch(() => BASELINE_SUPPORTED_FLAGS);
  const args = buildServerArgs({
    modelPath,
    port: model.port,
    ctxSize: decision.ctxSize,
    gpuLayers: decision.gpuLayers,
    threads: decision.threads,
    parallel: model.parallel,
    extraArgs: model.extra_args,
    rerank: model.rerank,
    apiKey: API_KEY_PLACEHOLDER,
    apiKeyFile: API_KEY_FILE_PLACEHOLDER,
    supportedFlags,
  });
  return [binary, ...args];
}

async function loadOrExplain(loader: LlamaLoader): Promise<LlamaHandle> {
  try {
    return await loader();
  } catch (error) {
    throw new RuntimeError(
      "engine_unavailable",
      `node-llama-cpp could not start on this machine: ${(error as Error).message}. Reinstall local-ai's dependencies (npm ci) so its prebuilt llama.cpp binaries are present`,
      { cause: error },
    );
  }
}
