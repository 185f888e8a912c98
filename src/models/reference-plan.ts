import type { GgufFileInfo } from "node-llama-cpp";
import type { Logger } from "pino";
import { modelReferenceKind } from "../config/model-reference.js";
import { modelSchema, type Config, type ModelConfig } from "../config/schema.js";
import { driverOf } from "../engine/drivers/engine-drivers.js";
import type { LlamaLoader } from "../engine/llama/llama-loader.js";
import { localModelInfo, type ModelInfoSource } from "../engine/plan/plan-local-model.js";
import { planModels } from "../engine/plan/plan-models.js";
import type { HardwareSnapshot, ModelPlanEntry, ModelPlanReport } from "../engine/plan/plan-types.js";
import type { DownloadSettings } from "./download-settings.js";
import { findDownloaded } from "./find-downloaded.js";
import { readRemoteGguf } from "./remote-gguf.js";

export interface ReferencePlanDeps {
  env: Readonly<Record<string, string | undefined>>;
  llama?: LlamaLoader;
  logger?: Logger;
  /** Plan for this machine instead of probing the real one (tests). */
  hardware?: HardwareSnapshot;
  signal?: AbortSignal;
}

/**
 * The settings a reference is planned with: those of the config entry whose `path` is this
 * reference (its name, engine, ctx_size, gpu_layers, parallel), else a model named "default"
 * with the config defaults, which is what `local-ai init` writes for it.
 */
export function settingsForReference(config: Config, ref: string): { name: string; model: ModelConfig } {
  const entry = Object.entries(config.llama.models).find(([, model]) => driverOf(model).local !== null && model.path === ref);
  if (entry !== undefined) return { name: entry[0], model: entry[1] };
  return { name: "default", model: modelSchema.parse({ path: ref }) };
}

/** One model planned with its GGUF info from `modelInfo`; the binary is not checked (nothing launches). */
async function planOne(config: Config, name: string, model: ModelConfig, modelInfo: ModelInfoSource, deps: ReferencePlanDeps): Promise<ModelPlanReport> {
  return planModels(
    { ...config, llama: { ...config.llama, models: { [name]: model } } },
    {
      model: name,
      modelInfo,
      checkBinary: false,
      env: deps.env,
      ...(deps.llama ? { llama: deps.llama } : {}),
      ...(deps.logger ? { logger: deps.logger } : {}),
      ...(deps.hardware ? { hardware: deps.hardware } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  );
}

/** pullModel's fit check: the plan of the model from the header read remotely. */
export function fitCheckFor(config: Config, ref: string, deps: ReferencePlanDeps): (info: GgufFileInfo, signal?: AbortSignal) => Promise<ModelPlanEntry> {
  const { name, model } = settingsForReference(config, ref);
  return async (info, signal) => {
    const report = await planOne(config, name, model, async () => ({ info, path: ref }), { ...deps, ...(signal ? { signal } : {}) });
    return { ...(report.models[0] as ModelPlanEntry), ref };
  };
}

/**
 * `plan --model <ref>`: a downloaded reference is planned from its file, one that is not from its
 * header read over the network (nothing is downloaded); a local path from the file.
 */
export async function planReference(config: Config, ref: string, settings: DownloadSettings, deps: ReferencePlanDeps): Promise<ModelPlanReport> {
  const { name, model } = settingsForReference(config, ref);
  let modelInfo: ModelInfoSource;
  if (modelReferenceKind(ref) === "path") {
    modelInfo = (modelName, entry, signal) => localModelInfo(modelName, { ...entry, path: ref }, signal);
  } else {
    const local = await findDownloaded(ref, settings);
    modelInfo =
      local !== null
        ? (modelName, entry, signal) => localModelInfo(modelName, { ...entry, path: local }, signal)
        : async (_name, _entry, signal) => ({ info: await readRemoteGguf(ref, deps.env, signal), path: ref });
  }
  const report = await planOne(config, name, model, modelInfo, deps);
  return { ...report, models: report.models.map((entry) => ({ ...entry, ref })) };
}
