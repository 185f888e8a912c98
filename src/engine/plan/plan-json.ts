import type { HardwareJson, ModelFactsJson, ModelPlanEntryJson, PlanEstimatesJson, PlanReportJson } from "./plan-report-schema.js";
import type { HardwareReport, ModelFacts, ModelPlanEntry, ModelPlanReport, PlanEstimates } from "./plan-types.js";

/**
 * The one mapping from the planner's camelCase report to the snake_case JSON every output uses
 * (one naming convention on every wire; `plan --json` used to say `freeBytes` where doctor said
 * `free_bytes`). Typed by plan-report-schema.ts, so a field the schema does not list is a compile
 * error here.
 */
export function planReportJson(report: ModelPlanReport): PlanReportJson {
  return { ok: report.ok, hardware: hardwareJson(report.hardware), models: report.models.map(planEntryJson), notes: report.notes };
}

export function hardwareJson(hardware: HardwareReport): HardwareJson {
  return {
    ram: { total_bytes: hardware.ram.totalBytes, free_bytes: hardware.ram.freeBytes },
    gpu: {
      backend: hardware.gpu.backend,
      devices: hardware.gpu.devices,
      vram: { total_bytes: hardware.gpu.vram.totalBytes, free_bytes: hardware.gpu.vram.freeBytes },
      unified_bytes: hardware.gpu.unifiedBytes,
      probed: hardware.gpu.probed,
    },
    cpu: { logical_cores: hardware.cpu.logicalCores, math_cores: hardware.cpu.mathCores },
    margins: { ram_bytes: hardware.margins.ramBytes, vram_bytes: hardware.margins.vramBytes },
    summary: hardware.summary,
  };
}

export function planEntryJson(entry: ModelPlanEntry): ModelPlanEntryJson {
  const json: ModelPlanEntryJson = { name: entry.name, engine: entry.engine, status: entry.status };
  if (entry.ref !== undefined) json.ref = entry.ref;
  if (entry.remote !== undefined) json.remote = { base_url: entry.remote.baseUrl, model: entry.remote.model, summary: entry.remote.summary };
  if (entry.model !== undefined) json.model = modelFactsJson(entry.model);
  if (entry.plan !== undefined) {
    const { plan } = entry;
    json.plan = {
      gpu_layers: plan.gpuLayers,
      total_layers: plan.totalLayers,
      ctx_size: plan.ctxSize,
      threads: plan.threads,
      estimates: planEstimatesJson(plan.estimates),
      reason: plan.reason,
      notes: plan.notes,
      ...(plan.command === undefined ? {} : { command: plan.command }),
    };
  }
  if (entry.error !== undefined) json.error = entry.error;
  if (entry.toolSchemas !== undefined) json.tool_schemas = entry.toolSchemas.map((share) => ({ ...share }));
  return json;
}

export function modelFactsJson(facts: ModelFacts): ModelFactsJson {
  return {
    architecture: facts.architecture,
    parameters: facts.parameters,
    quantization: facts.quantization,
    bits_per_weight: facts.bitsPerWeight,
    train_context_size: facts.trainContextSize ?? null,
    total_layers: facts.totalLayers,
    weights_bytes: facts.weightsBytes,
  };
}

export function planEstimatesJson(estimates: PlanEstimates): PlanEstimatesJson {
  return {
    weights_bytes: estimates.weightsBytes,
    kv_cache_bytes: estimates.kvCacheBytes,
    compute_bytes: estimates.computeBytes,
    total_bytes: estimates.totalBytes,
    ram_bytes: estimates.ramBytes,
    vram_bytes: estimates.vramBytes,
  };
}
