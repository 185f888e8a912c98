import type { Command } from "commander";
import { planSelection } from "../../app/commands/plan-selection.js";
import { loadConfig } from "../../config/load-config.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { planReportJson } from "../../engine/plan/plan-json.js";
import { renderPlan } from "../../engine/plan/render-plan.js";
import { toRuntimeError } from "../../shared/runtime-error.js";
import type { CliDeps } from "../cli-deps.js";
import { writeOut } from "../write-out.js";

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
    const report = await planSelection(options.model, configState, { logger, env: deps.env, cwd: deps.cwd });
    await writeOut(deps.stdout, json ? `${JSON.stringify(planReportJson(report), null, 2)}\n` : renderPlan(report, { color: deps.stdoutIsTTY }));
    deps.setExitCode(report.ok ? 0 : 1);
  } catch (error) {
    const failure = toRuntimeError(error);
    if (failure.code === "internal_error") logger.error({ err: error }, "plan failed");
    if (json) {
      const body = { ok: false, error: { code: failure.code, message: failure.message, ...(failure.details ? { details: failure.details } : {}) } };
      await writeOut(deps.stdout, `${JSON.stringify(body, null, 2)}\n`);
    } else {
      await writeOut(deps.stderr, `local-ai plan: ${failure.message}\n`);
    }
    deps.setExitCode(failure.code === "invalid_params" ? 2 : 1);
  } finally {
    await flushLogger(logger);
  }
}
