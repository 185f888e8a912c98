import path from "node:path";
import type { Logger } from "pino";
import { configOrDefaults } from "../../config/config-or-defaults.js";
import { requireConfig, type ConfigState } from "../../config/load-config.js";
import { isModelReference } from "../../config/model-reference.js";
import type { ModelPlanReport } from "../../engine/plan/plan-types.js";
import { downloadSettingsOf } from "../../models/download-settings.js";
import { modelInfoIn } from "../../models/model-files.js";
import { planReference } from "../../models/reference-plan.js";
import { planWithTools } from "../runtime/plan-with-tools.js";

/**
 * `local-ai plan [--model X]`. `--model NAME` plans a configured model; `--model REF` (a URL, an
 * hf: reference or a .gguf path that no entry is named after) plans that model without
 * downloading it (its header is read over the network), with the settings of the entry that
 * uses it or the defaults; it works without a config file. Configured references are looked up
 * in app.models_dir.
 */
export async function planSelection(
  model: string | undefined,
  configState: ConfigState,
  deps: { logger: Logger; env: Readonly<Record<string, string | undefined>>; cwd: string },
): Promise<ModelPlanReport> {
  const { logger, env } = deps;
  const known = configState.status === "loaded" && model !== undefined && model in configState.config.llama.models;
  if (model !== undefined && !known && (isModelReference(model) || model.toLowerCase().endsWith(".gguf"))) {
    const { config } = configState.status === "loaded" ? { config: configState.config } : await configOrDefaults(undefined, deps);
    const ref = isModelReference(model) ? model : path.resolve(deps.cwd, model);
    return planReference(config, ref, downloadSettingsOf(config, env), { env, logger });
  }
  const config = requireConfig(configState);
  return planWithTools(config, { logger, env, modelInfo: modelInfoIn(downloadSettingsOf(config, env)), ...(model !== undefined ? { model } : {}) });
}
