import type { Logger } from "pino";
import type { Config } from "../../config/schema.js";
import type { LlamaLoader } from "../../engine/llama/llama-loader.js";
import { downloadSettingsOf, type DownloadSettings } from "../../models/download-settings.js";
import { ModelFiles } from "../../models/model-files.js";
import type { ModelPuller } from "../../models/model-puller.js";
import { PrivateModelPuller } from "./private-model-puller.js";

/** Model files of one runtime: where they go, the pulls in progress, the configured models' files. */
export interface ModelServices {
  settings: DownloadSettings;
  puller: ModelPuller;
  files: ModelFiles;
}

/** `llama` is the runtime's node-llama-cpp (the fit check plans with it). */
export function createModelServices(config: Config, env: Readonly<Record<string, string | undefined>>, llama: LlamaLoader, logger: Logger): ModelServices {
  const settings = downloadSettingsOf(config, env);
  const puller = new PrivateModelPuller({ config, settings, llama, logger }, { dataDir: config.app.data_dir, modelsDir: settings.modelsDir });
  return { settings, puller, files: new ModelFiles(settings, puller, logger.child({ component: "models" })) };
}
