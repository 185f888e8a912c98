import type { Config } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import { resolveMemoryBudget, type BudgetSource } from "../../engine/scheduler/memory-budget.js";
import type { LlamaLoader } from "../../engine/llama/llama-loader.js";
import type { ModelPlanEntry } from "../../engine/plan/plan-types.js";
import { formatBytes } from "../../shared/format-bytes.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, ok } from "../check-result.js";

const ID = "memory.budget";
const TITLE = "Memory budget";

/**
 * `memory.budget`: what the scheduler may let loaded models hold (llama.memory_budget, `auto`
 * resolved as a server would resolve it now), and what the configured local models need of it
 * (plan's estimates, from the `model_plans` check's plans): all at once, or taking turns. A model
 * that needs more than the whole budget fails (its first use would be `model_too_large`).
 */
export async function checkMemoryBudget(config: Config, plans: readonly ModelPlanEntry[], llama: LlamaLoader): Promise<CheckResult> {
  const hasLocal = Object.values(config.llama.models).some((model) => driverOf(model).local !== null);
  const { budget, ram, vram } = await resolveMemoryBudget(config, hasLocal ? async () => (await llama()).llama : null);
  const needs = plans.flatMap((entry) => (entry.plan === undefined ? [] : [{ name: entry.name, ramBytes: entry.plan.estimates.ramBytes, vramBytes: entry.plan.estimates.vramBytes }]));
  const together = needs.reduce((sum, need) => ({ ramBytes: sum.ramBytes + need.ramBytes, vramBytes: sum.vramBytes + need.vramBytes }), { ramBytes: 0, vramBytes: 0 });
  const allFit = together.ramBytes <= budget.ramBytes && together.vramBytes <= budget.vramBytes;
  const tooLarge = needs.filter((need) => need.ramBytes > budget.ramBytes || need.vramBytes > budget.vramBytes);
  const data = {
    ram_bytes: budget.ramBytes,
    vram_bytes: budget.vramBytes,
    ram: sourceJson(ram),
    vram: sourceJson(vram),
    margin: config.llama.memory_margin,
    need: { ram_bytes: together.ramBytes, vram_bytes: together.vramBytes },
    models: Object.fromEntries(needs.map((need) => [need.name, { ram_bytes: need.ramBytes, vram_bytes: need.vramBytes }])),
    all_fit: allFit,
  };
  const pools = `RAM ${formatBytes(budget.ramBytes)} ${describeSource(ram)}, VRAM ${formatBytes(budget.vramBytes)} ${describeSource(vram)}`;
  if (tooLarge.length > 0) {
    const names = tooLarge.map((need) => `${need.name} (${formatBytes(need.ramBytes)} RAM, ${formatBytes(need.vramBytes)} VRAM)`).join(", ");
    return fail(ID, TITLE, `${pools}; more than the whole budget: ${names}, refused with model_too_large at first use`, "lower those models' ctx_size or parallel, use a smaller quantization, or raise llama.memory_budget (`local-ai plan --model NAME` shows what fits)", data);
  }
  if (needs.length === 0) return ok(ID, TITLE, `${pools}; no local model planned to count against it`, data);
  const use = `the ${needs.length === 1 ? "model needs" : `${needs.length} local models need`} ${formatBytes(together.ramBytes)} RAM and ${formatBytes(together.vramBytes)} VRAM${needs.length > 1 ? " together" : ""}`;
  return ok(ID, TITLE, `${pools}; ${use}: ${allFit ? "all can be loaded at once" : "not all at once, so idle ones are unloaded to make room (least recently used first)"}`, data);
}

function describeSource(source: BudgetSource): string {
  return source.setting === "configured" ? "(configured)" : `(auto: ${formatBytes(source.freeBytes)} free less ${formatBytes(source.marginBytes)} margin)`;
}

function sourceJson(source: BudgetSource): Record<string, unknown> {
  return source.setting === "configured" ? { setting: "configured" } : { setting: "auto", free_bytes: source.freeBytes, margin_bytes: source.marginBytes };
}
