import type { Command } from "commander";
import { loadConfig, requireConfig } from "../../config/load-config.js";
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
    const config = requireConfig(configState);
    const report = await planWithTools(config, { logger, env: deps.env, ...(options.model !== undefined ? { model: options.model } : {}) });
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

/** Resolves once the text is handed to the OS, so a piped reader gets all of it before exit. */
function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => (error === undefined || error === null ? resolve() : reject(error)));
  });
}
