import type { Llama } from "node-llama-cpp";
import type { Config } from "../../config/schema.js";
import { parseByteSize } from "../../shared/byte-size.js";
import { probeHardware } from "../plan/hardware.js";
import type { MemoryNeed } from "./scheduler-types.js";

/** Where one pool's budget came from: a configured size, or `auto` (what is free less the margin). */
export type BudgetSource = { setting: "configured" } | { setting: "auto"; freeBytes: number; marginBytes: number };

export interface MemoryBudget {
  budget: MemoryNeed;
  ram: BudgetSource;
  vram: BudgetSource;
}

/**
 * llama.memory_budget with `auto` resolved: what plan sees as free now (node-llama-cpp's RAM and
 * VRAM state where `llama` is given, else the OS's RAM and no VRAM) less llama.memory_margin
 * (auto: node-llama-cpp's own paddings, as plan uses). The scheduler resolves it once, at the
 * first load; doctor shows it.
 */
export async function resolveMemoryBudget(config: Config, llama: (() => Promise<Llama>) | null): Promise<MemoryBudget> {
  const { ram, vram } = config.llama.memory_budget;
  const fixed = (value: number | string): number => parseByteSize(value) ?? 0;
  if (ram !== "auto" && vram !== "auto") return { budget: { ramBytes: fixed(ram), vramBytes: fixed(vram) }, ram: { setting: "configured" }, vram: { setting: "configured" } };
  const hardware = await probeHardware(llama === null ? null : await llama());
  const margin = config.llama.memory_margin;
  const ramMargin = margin === "auto" ? hardware.margins.ramBytes : fixed(margin);
  const vramMargin = margin === "auto" ? hardware.margins.vramBytes : fixed(margin);
  return {
    budget: {
      ramBytes: ram === "auto" ? Math.max(0, hardware.ram.freeBytes - ramMargin) : fixed(ram),
      vramBytes: vram === "auto" ? Math.max(0, hardware.gpu.vram.freeBytes - vramMargin) : fixed(vram),
    },
    ram: ram === "auto" ? { setting: "auto", freeBytes: hardware.ram.freeBytes, marginBytes: ramMargin } : { setting: "configured" },
    vram: vram === "auto" ? { setting: "auto", freeBytes: hardware.gpu.vram.freeBytes, marginBytes: vramMargin } : { setting: "configured" },
  };
}
