import type { Logger } from "pino";
import { isModelReference } from "../config/model-reference.js";
import type { ModelConfig } from "../config/schema.js";
import type { ModelFileResolver } from "../engine/model-file.js";
import { localModelInfo, type ModelInfoSource } from "../engine/plan/plan-local-model.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { DownloadSettings } from "./download-settings.js";
import { findDownloaded } from "./find-downloaded.js";
import type { ModelPuller } from "./model-puller.js";

/** Logged progress of a `download: auto` download: one line per this many percent. */
const LOG_STEP_PERCENT = 10;

/**
 * Configured models whose `path` is a reference: where their file is (offline), and, for
 * `download: auto`, getting it at warm-up. serve-* and chat never download silently: a reference
 * that is not downloaded is model_missing with the fix, unless the model opted in.
 */
export class ModelFiles {
  constructor(
    private readonly settings: DownloadSettings,
    private readonly puller: ModelPuller,
    private readonly logger: Logger,
  ) {}

  /** The local file of a configured model; never downloads. */
  locate(name: string, model: ModelConfig): Promise<string> {
    return locateModelFile(name, model, this.settings);
  }

  /** The engines' resolver: locate, or for `download: auto` pull first (fit check included), with progress. */
  resolver(name: string, model: ModelConfig): ModelFileResolver {
    return async (options) => {
      try {
        return await this.locate(name, model);
      } catch (error) {
        if (!(error instanceof RuntimeError) || error.details?.reason !== "not_downloaded" || model.download !== "auto") throw error;
      }
      const ref = model.path ?? "";
      const log = this.logger.child({ model: name, ref });
      let logged = -LOG_STEP_PERCENT;
      log.info({ models_dir: this.settings.modelsDir }, "model not downloaded yet (download: auto): pulling it");
      const result = await this.puller.pull({
        ref,
        ...(options.signal ? { signal: options.signal } : {}),
        onProgress: (progress) => {
          options.onProgress?.({ phase: "downloading", downloadedBytes: progress.downloadedBytes, totalBytes: progress.totalBytes, ...(progress.totalBytes > 0 ? { progress: progress.downloadedBytes / progress.totalBytes } : {}) });
          const percent = progress.totalBytes > 0 ? Math.floor((progress.downloadedBytes * 100) / progress.totalBytes) : 0;
          if (percent >= logged + LOG_STEP_PERCENT) {
            logged = percent - (percent % LOG_STEP_PERCENT);
            log.info({ downloaded_bytes: progress.downloadedBytes, total_bytes: progress.totalBytes, percent }, "downloading model");
          }
        },
      });
      log.info({ path: result.path, bytes: result.bytes }, "model downloaded");
      return result.path;
    };
  }

  /** plan: the GGUF of a configured model, located first. */
  readonly planInfo: ModelInfoSource = (name, model, signal) => modelInfoIn(this.settings)(name, model, signal);
}

/**
 * The local file of a configured model: its `path`, or for a reference its download in
 * models_dir; never downloads. A reference not downloaded is model_missing with the fix.
 */
export async function locateModelFile(name: string, model: ModelConfig, settings: DownloadSettings): Promise<string> {
  const configured = model.path;
  if (configured === null) throw new RuntimeError("config_invalid", `llama.models.${name}.path is required for engine "${model.engine}"`);
  if (!isModelReference(configured)) return configured;
  const found = await findDownloaded(configured, settings);
  if (found !== null) return found;
  const auto =
    model.download === "auto"
      ? " (it has download: auto: warm_up, the first chat or serve-http downloads it first)"
      : ` (or set llama.models.${name}.download: auto to download it at warm-up)`;
  throw new RuntimeError("model_missing", `llama.models.${name}.path: ${configured} is not downloaded yet; run \`local-ai pull ${configured}\`${auto}`, {
    details: { ref: configured, config_key: `llama.models.${name}.path`, reason: "not_downloaded", fix: `local-ai pull ${configured}`, models_dir: settings.modelsDir },
  });
}

/** plan and doctor: a configured model's GGUF from its located file (a reference not downloaded is model_missing). */
export function modelInfoIn(settings: DownloadSettings): ModelInfoSource {
  return async (name, model, signal) => localModelInfo(name, { ...model, path: await locateModelFile(name, model, settings) }, signal);
}
