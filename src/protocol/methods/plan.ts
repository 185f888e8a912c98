import type { Logger } from "pino";
import { planReportJson } from "../../engine/plan/plan-json.js";
import type { ModelPlanReport } from "../../engine/plan/plan-types.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { defineMethod, type MethodDefinition } from "../method.js";


/** Which models a `plan` request covers: `{}` the default agent's model, `{model}` one, `{all: true}` every one. */
export interface PlanSelection {
  model?: string;
  all?: boolean;
}

/**
 * Seed 000 `plan`: the launch plan preview. A model that cannot be planned is an error frame with
 * the seed's code (`model_missing`, `model_plan_error`, `binary_missing`, ...) and the whole report
 * in `details`, so a host can branch on the code and still show every reason. Needs a valid config
 * (config_missing / config_invalid otherwise); an unknown model is invalid_params listing the known ones.
 */
export function planMethod(runPlan: (selection: PlanSelection, signal: AbortSignal, log: Logger) => Promise<ModelPlanReport>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.planParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.planResult),
    handle: async (input, context) => {
      const selection: PlanSelection = input.all === true ? { all: true } : input.model !== undefined ? { model: input.model } : {};
      const report = await runPlan(selection, context.signal, context.log);
      const failing = report.models.find((entry) => entry.status === "error" && entry.error !== undefined);
      if (failing?.error !== undefined) {
        const others = report.models.filter((entry) => entry.status === "error").length - 1;
        const more = others > 0 ? ` (and ${others} more model${others === 1 ? "" : "s"}; see details.models)` : "";
        throw new RuntimeError(failing.error.code, `Model "${failing.name}" cannot be planned: ${failing.error.message}${more}`, { details: { ...planReportJson(report) } });
      }
      return planReportJson(report);
    },
  });
}
