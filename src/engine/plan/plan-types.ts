import type { ErrorCode } from "../../shared/runtime-error.js";
import type { ToolSchemaShare } from "./tool-schema-budget.js";
import type { EngineKind } from "../../config/engine-kinds.js";

/**
 * The shapes `local-ai plan --json` and the stdio `plan` method return. Sizes are bytes (numbers:
 * they survive JSON, and every real size fits a double exactly).
 */

/** Bytes in system RAM and in GPU memory. */
export interface MemorySplit {
  ramBytes: number;
  vramBytes: number;
}

export type GpuBackend = "cuda" | "vulkan" | "metal" | false;

/** What the planner knows about this machine; injected in tests to simulate any machine. */
export interface HardwareSnapshot {
  ram: { totalBytes: number; freeBytes: number };
  gpu: {
    /** The backend node-llama-cpp loaded; false = CPU only. */
    backend: GpuBackend;
    devices: string[];
    /** Summed over all devices: node-llama-cpp reports VRAM as one pool. */
    vram: { totalBytes: number; freeBytes: number };
    /** > 0 on unified-memory machines (Apple Silicon): GPU memory is then also RAM. */
    unifiedBytes: number;
    /** False when node-llama-cpp was not loaded (no local model to plan): GPU facts unknown. */
    probed: boolean;
  };
  cpu: {
    logicalCores: number;
    /** Cores useful for math (physical performance cores); what `threads: auto` uses. 0 = unknown. */
    mathCores: number;
    /**
     * What a llama-server launch counts for `threads: auto` (cpu-cores.ts physicalCores: it never
     * loads node-llama-cpp), so plan shows the `-t` that is launched. Absent: mathCores is used.
     */
    serverCores?: number;
  };
  /** Kept free on purpose: estimates are not exact and the OS and other programs need room. */
  margins: MemorySplit;
}

export interface PlanEstimates {
  weightsBytes: number;
  /** The K and V caches for the whole context (all sequences). */
  kvCacheBytes: number;
  /** Everything else the context allocates: compute graph buffers and the output (logits) buffer. */
  computeBytes: number;
  totalBytes: number;
  /** Where the total lives. */
  ramBytes: number;
  vramBytes: number;
}

export interface ModelPlan {
  gpuLayers: number;
  totalLayers: number;
  ctxSize: number;
  threads: number;
  estimates: PlanEstimates;
  /** One or two sentences: the decision and the numbers behind it. */
  reason: string;
  /** Decisions that differ from the config, in words (ctx capped, threads oversubscribed...). */
  notes: string[];
  /** The exact llama-server command line (llama-server models only); the api key is a placeholder. */
  command?: string[];
}

/** What the GGUF says about the model, for reports. */
export interface ModelFacts {
  architecture: string;
  parameters: number;
  /** llama.cpp's name of the file type, e.g. "Q4_K_M", "F16". */
  quantization: string;
  /** Bits per weight over the whole file (file size * 8 / parameters). */
  bitsPerWeight: number;
  trainContextSize: number | undefined;
  /** Offloadable layers as llama.cpp counts them: the blocks plus the output layer. */
  totalLayers: number;
  weightsBytes: number;
}

export interface ModelPlanEntry {
  name: string;
  /** The model reference (or path) planned, when it was given instead of a configured model (`plan --model REF`, the pull fit check). */
  ref?: string;
  engine: EngineKind;
  status: "ok" | "error";
  /** openai models: where requests go; there is nothing to plan locally. */
  remote?: { baseUrl: string; model: string | null; summary: string };
  model?: ModelFacts;
  plan?: ModelPlan;
  error?: { code: ErrorCode; message: string; details?: Record<string, unknown> };
  /** How much of a conversation's context each agent's tool schemas take on this model (when the caller listed them). */
  toolSchemas?: ToolSchemaShare[];
}

export interface HardwareReport extends HardwareSnapshot {
  /** e.g. "CPU only: 2 cores, 22.3 GiB free of 23.5 GiB RAM". */
  summary: string;
}

export interface ModelPlanReport {
  ok: boolean;
  hardware: HardwareReport;
  models: ModelPlanEntry[];
  /** About the models together (each is planned as if alone). */
  notes: string[];
}
