import type { Command } from "commander";
import path from "node:path";
import type { Logger } from "pino";
import { loadConfig, requireConfig, type ConfigState } from "../../config/load-config.js";
import { isModelReference } from "../../config/model-reference.js";
import type { ModelPlanReport } from "../../engine/plan/plan-types.js";
import { downloadSettingsOf } from "../../models/download-settings.js";
import { modelInfoIn } from "../../models/model-files.js";
import { planReference } from "../../models/reference-plan.js";
import { configOrDefaults } from "../cli-config.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { planWithTools } from "../../app/plan-with-tools.js";
import { planReportJson } from "../../engine/plan/plan-json.js";
import { renderPlan } from "../../engine/plan/render-plan.js";
import { toRuntimeError } from "../../shared/runtime-error.js";
import type { CliDeps } from "../cli-deps.js";

export interface PlanCommandOptions {
  json?: boolean;
  config?: string;
  model?: string;
}

/** The `plan` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runPlanCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<PlanCommandOptions>();
  const json = options.json === true;
  const configState = await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd });
  // Quiet by default: the report is the output; LOCAL_AI_LOG_LEVEL=debug shows the details.
  const logger = createLogger({ level: "warn", env: deps.env });
  try {
    const report = await planSelection(options.model, configState, logger, deps);
    await write(deps.stdout, json ? `${JSON.stringify(planReportJson(report), null, 2)}\n` : renderPlan(report, { color: deps.stdoutIsTTY }));
    deps.setExitCode(report.ok ? 0 : 1);
  } catch (error) {
    const failure = toRuntimeError(error);
    if (failure.code === "internal_error") logger.error({ err: error }, "plan failed");
    if (json) {
      const body = { ok: false, error: { code: failure.code, message: failure.message, ...(failure.details ? { details: failure.details } : {}) } };
      await write(deps.stdout, `${JSON.stringify(body, null, 2)}\n`);
    } else {
      await write(deps.stderr, `local-ai plan: ${failure.message}\n`);
    }
    deps.setExitCode(failure.code === "invalid_params" ? 2 : 1);
  } finally {
    await flushLogger(logger);
  }
}

/**
 * `--model NAME` plans a configured model; `--model REF` (a URL, an hf: reference or a .gguf path
 * that no entry is named after) plans that model without downloading it (its header is read
 * over the network), with the settings of the entry that uses it or the defaults; it works
 * without a config file. Configured references are looked up in app.models_dir.
 */
async function planSelection(model: string | undefined, configState: ConfigState, logger: Logger, deps: CliDeps): Promise<ModelPlanReport> {
  const known = configState.status === "loaded" && model !== undefined && model in configState.config.llama.models;
  if (model !== undefined && !known && (isModelReference(model) || model.toLowerCase().endsWith(".gguf"))) {
    const { config } = configState.status === "loaded" ? { config: configState.config } : await configOrDefaults(undefined, deps);
    const ref = isModelReference(model) ? model : path.resolve(deps.cwd, model);
    return planReference(config, ref, downloadSettingsOf(config, deps.env), { env: deps.env, logger });
  }
  const config = requireConfig(configState);
  return planWithTools(config, { logger, env: deps.env, modelInfo: modelInfoIn(downloadSettingsOf(config, deps.env)), ...(model !== undefined ? { model } : {}) });
}

/** Resolves once the text is handed to the OS, so a piped reader gets all of it before exit. */
function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => (error === undefined || error === null ? resolve() : reject(error)));
  });
}
