import { formatBytes } from "../../shared/format-bytes.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { MemoryNeed } from "./scheduler-types.js";

/** Whether `need` fits beside what is `used` within `budget`, in both pools. */
export function fitsBeside(need: MemoryNeed, used: MemoryNeed, budget: MemoryNeed): boolean {
  return used.ramBytes + need.ramBytes <= budget.ramBytes && used.vramBytes + need.vramBytes <= budget.vramBytes;
}

/** `model_too_large`: the need, the budget and the fix. */
export function tooLarge(model: string, need: MemoryNeed, budget: MemoryNeed): RuntimeError {
  const pool = need.ramBytes > budget.ramBytes ? "RAM" : "VRAM";
  const needed = pool === "RAM" ? need.ramBytes : need.vramBytes;
  const allowed = pool === "RAM" ? budget.ramBytes : budget.vramBytes;
  return new RuntimeError(
    "model_too_large",
    `Model "${model}" needs ${formatBytes(needed)} of ${pool}, more than the whole budget of ${formatBytes(allowed)} (llama.memory_budget); lower llama.models.${model}.ctx_size or parallel, use a smaller quantization, or raise the budget (\`local-ai plan --model ${model}\` shows what fits)`,
    {
      details: {
        model,
        pool: pool.toLowerCase(),
        need: { ram_bytes: need.ramBytes, vram_bytes: need.vramBytes },
        budget: { ram_bytes: budget.ramBytes, vram_bytes: budget.vramBytes },
        config_key: "llama.memory_budget",
      },
    },
  );
}
