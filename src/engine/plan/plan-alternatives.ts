import { formatBytes } from "../../shared/format-bytes.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { estimateUsage, sum, vramOf, type ModelEstimator, type Usage } from "./estimator.js";
import { describeParts, describePool, type ContextLabel } from "./describe-plan.js";
import { hasGpu, ramFits, ramNeeded, usableRam, usableVram, vramFits } from "./memory-fit.js";
import { bestAtContext, contextCandidates, MIN_USEFUL_CTX, suggestionCandidates } from "./plan-search.js";
import type { HardwareSnapshot } from "./plan-types.js";
import { SUGGESTED_QUANTIZATIONS, weightsBytesAt } from "./quantization.js";

export type AlternativeKind = "ctx_size" | "gpu_layers" | "quantization" | "smaller_model" | "free_memory";

export interface Alternative {
  kind: AlternativeKind;
  /** The setting's value (ctx_size, gpu_layers), a quantization name, or bytes (free_memory). */
  value: number | string;
  text: string;
}

export interface FailedRequest {
  modelName: string;
  /** After resolution: 0 without a GPU, clamped to the model's layers. */
  layers: "auto" | number;
  /** The largest context that was tried (the configured one, capped at the trained length). */
  ctxSize: number;
  label?: ContextLabel;
}

/**
 * A model_plan_error whose message carries the numbers (what it needs, what is usable) and what
 * would fit instead, each with the setting to change. The same list is in details.alternatives.
 */
export async function planError(estimator: ModelEstimator, hardware: HardwareSnapshot, request: FailedRequest): Promise<RuntimeError> {
  const attempt = (await bestAtContext(estimator, hardware, request.ctxSize, request.layers)).usage;
  const alternatives = await findAlternatives(estimator, hardware, request, attempt);
  const short: string[] = [];
  if (!vramFits(attempt, hardware)) short.push(describePool("VRAM", vramOf(attempt), hardware));
  if (!ramFits(attempt, hardware)) short.push(describePool("RAM", ramNeeded(attempt, hardware), hardware));
  const where = hasGpu(hardware) ? ` with ${attempt.gpuLayers}/${estimator.facts.totalLayers} layers on the GPU` : " (no GPU backend: CPU only)";
  const fix = alternatives.length > 0 ? `What would fit: ${alternatives.map((alt) => alt.text).join("; or ")}.` : "Nothing smaller of this model fits either; use a machine with more memory.";
  const floorNote = request.ctxSize > MIN_USEFUL_CTX ? ` (contexts down to ${MIN_USEFUL_CTX} were tried too)` : "";
  const message =
    `Model ${request.modelName} does not fit on this machine at ctx_size ${request.ctxSize}${where}${floorNote}: ` +
    `it needs ${describeParts(attempt, request.label)}; ${short.join("; ")}. ${fix}`;
  return new RuntimeError("model_plan_error", message, {
    details: {
      model: request.modelName,
      ctx_size: request.ctxSize,
      gpu_layers: attempt.gpuLayers,
      total_layers: estimator.facts.totalLayers,
      needed: { ram_bytes: ramNeeded(attempt, hardware), vram_bytes: vramOf(attempt) },
      usable: { ram_bytes: usableRam(hardware), vram_bytes: usableVram(hardware) },
      estimates: { weights_bytes: sum(attempt.weights), kv_cache_bytes: sum(attempt.kv), compute_bytes: sum(attempt.compute) },
      alternatives,
    },
  });
}

async function findAlternatives(estimator: ModelEstimator, hardware: HardwareSnapshot, request: FailedRequest, attempt: Usage): Promise<Alternative[]> {
  const key = `llama.models.${request.modelName}`;
  const alternatives: Alternative[] = [];
  const floor = Math.min(request.ctxSize, MIN_USEFUL_CTX);

  // A fixed gpu_layers that VRAM cannot hold (or too few layers for RAM): what auto would pick.
  if (typeof request.layers === "number" && hasGpu(hardware)) {
    for (const ctxSize of contextCandidates(request.ctxSize)) {
      const auto = await bestAtContext(estimator, hardware, ctxSize, "auto");
      if (auto.fits && auto.usage.gpuLayers !== request.layers) {
        const ctxPart = ctxSize < request.ctxSize ? ` and ${key}.ctx_size to ${ctxSize}` : "";
        alternatives.push({ kind: "gpu_layers", value: auto.usage.gpuLayers, text: `set ${key}.gpu_layers to ${auto.usage.gpuLayers} (or auto)${ctxPart}` });
        break;
      }
    }
  }

  for (const ctxSize of suggestionCandidates(floor)) {
    if ((await bestAtContext(estimator, hardware, ctxSize, request.layers)).fits) {
      alternatives.push({ kind: "ctx_size", value: ctxSize, text: `set ${key}.ctx_size to ${ctxSize} (short: an agent with tools needs ${MIN_USEFUL_CTX} or more)` });
      break;
    }
  }

  // Smaller weights: the memory both pools can hold, less what the context needs at the floor.
  const { facts } = estimator;
  const atFloor = await estimateUsage(estimator, attempt.gpuLayers, floor);
  const pooled = usableRam(hardware) + (hasGpu(hardware) && hardware.gpu.unifiedBytes === 0 ? usableVram(hardware) : 0);
  const weightsBudget = pooled - sum(atFloor.kv) - sum(atFloor.compute);
  const smaller = SUGGESTED_QUANTIZATIONS.filter((quant) => quant.bitsPerWeight < facts.bitsPerWeight * 0.9);
  const quant = smaller.find((option) => weightsBytesAt(facts.parameters, option.bitsPerWeight) <= weightsBudget);
  if (quant !== undefined) {
    const size = formatBytes(weightsBytesAt(facts.parameters, quant.bitsPerWeight));
    const ctxPart = floor < request.ctxSize ? ` with ${key}.ctx_size ${floor}` : "";
    alternatives.push({ kind: "quantization", value: quant.name, text: `use a ${quant.name} quantization of this model (~${size} of weights instead of ${formatBytes(facts.weightsBytes)})${ctxPart}` });
  } else if (weightsBudget > 0) {
    const q4 = SUGGESTED_QUANTIZATIONS.find((option) => option.name === "Q4_K_M")?.bitsPerWeight ?? 4.9;
    const maxParams = (weightsBudget * 8) / q4;
    alternatives.push({ kind: "smaller_model", value: Math.floor(maxParams), text: `use a smaller model: up to about ${formatParams(maxParams)} parameters at Q4_K_M fit` });
  }

  // Only when freeing memory can help: what the model needs must fit in the machine's total RAM.
  const missing = ramNeeded(attempt, hardware) - usableRam(hardware);
  if (missing > 0 && ramNeeded(attempt, hardware) + hardware.margins.ramBytes <= hardware.ram.totalBytes) {
    alternatives.push({ kind: "free_memory", value: missing, text: `free ${formatBytes(missing)} of RAM (close other programs) and plan again` });
  }
  return alternatives;
}

/** 7.2e9 -> "7.2B", 350e6 -> "350M". */
export function formatParams(count: number): string {
  if (count >= 1e9) return `${(count / 1e9).toFixed(1)}B`;
  if (count >= 1e6) return `${Math.round(count / 1e6)}M`;
  return `${Math.round(count / 1e3)}K`;
}
