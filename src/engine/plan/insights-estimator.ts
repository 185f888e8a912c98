import type { GgufFileInfo, GgufInsights } from "node-llama-cpp";
import type { ContextEstimate, ModelEstimator } from "./estimator.js";
import type { MemorySplit, ModelFacts } from "./plan-types.js";
import type { LlamaHandle } from "../llama/llama-loader.js";
import { fileTypeName } from "./quantization.js";

/** llama.cpp rounds the KV cache up to whole 256-cell pages. */
const KV_PAD = 256;
/** The default KV cache type (F16) in both node-llama-cpp and llama-server. */
const KV_BYTES_PER_VALUE = 2;

export interface InsightsEstimatorOptions {
  /** Parallel sequences (chats generating at once). */
  sequences?: number;
  /**
   * How ctx_size relates to them. node-llama-cpp (embedded): every sequence gets ctx_size
   * ("per_sequence"); llama-server: `-c` is the total, split among `--parallel` slots ("shared").
   */
  ctxMode?: "per_sequence" | "shared";
}

/**
 * The real estimator: node-llama-cpp's GGUF insights, which (V2) ask llama.cpp itself for the
 * buffer sizes of a simulated load without allocating anything, and fall back to node-llama-cpp's
 * formulas when that fails. The file must have passed validateGguf first: the simulation reads
 * the metadata in llama.cpp, which aborts the process on some malformed files.
 *
 * node-llama-cpp answers "context memory" as one number; the KV part is computed here from the
 * attention shape, so the report can say how much of it is KV cache and how much compute buffers.
 */
export async function createInsightsEstimator(info: GgufFileInfo, handle: LlamaHandle, options: InsightsEstimatorOptions = {}): Promise<ModelEstimator> {
  const insights: GgufInsights = await handle.module.GgufInsights.from(info, handle.llama);
  const sequences = Math.max(1, options.sequences ?? 1);
  const facts = modelFacts(info, insights);
  const blockCount = Math.max(1, facts.totalLayers - 1);
  const kvBytesPerCell = kvBytesPerCellOf(info);
  return {
    facts,
    weights: async (gpuLayers): Promise<MemorySplit> => {
      const { cpuRam, gpuVram } = await insights.estimateModelResourceRequirementsV2({ gpuLayers });
      return { ramBytes: cpuRam, vramBytes: gpuVram };
    },
    context: async (ctxSize, gpuLayers): Promise<ContextEstimate> => {
      const perSequence = options.ctxMode === "shared" ? Math.ceil(ctxSize / sequences) : ctxSize;
      const total = await insights.estimateContextResourceRequirementsV2({ contextSize: perSequence, modelGpuLayers: gpuLayers, sequences });
      const cells = sequences * Math.ceil(perSequence / KV_PAD) * KV_PAD;
      const kv = kvBytesPerCell * cells;
      // KV of an offloaded block lives on the GPU; the output layer (the +1) has none.
      const kvVram = Math.min(total.gpuVram, Math.round((kv * Math.min(gpuLayers, blockCount)) / blockCount));
      const kvRam = Math.min(total.cpuRam, kv - kvVram);
      return {
        kv: { ramBytes: kvRam, vramBytes: kvVram },
        compute: { ramBytes: total.cpuRam - kvRam, vramBytes: total.gpuVram - kvVram },
      };
    },
  };
}

export function modelFacts(info: GgufFileInfo, insights: GgufInsights): ModelFacts {
  const parameters = insights.totalParameters;
  const weightsBytes = insights.modelSize;
  const bitsPerWeight = parameters > 0 ? (weightsBytes * 8) / parameters : 0;
  const general = info.metadata.general as { architecture?: string; file_type?: number } | undefined;
  return {
    architecture: general?.architecture ?? "unknown",
    parameters,
    quantization: fileTypeName(general?.file_type, bitsPerWeight),
    bitsPerWeight,
    trainContextSize: insights.trainContextSize,
    totalLayers: insights.totalLayers,
    weightsBytes,
  };
}

/**
 * K and V bytes per context cell over all blocks: (n_embd_k_gqa + n_embd_v_gqa) * F16 per block,
 * with per-block head counts where the file has them. 0 for models without attention heads
 * (recurrent models keep a fixed-size state instead, which the total still counts as compute).
 */
function kvBytesPerCellOf(info: GgufFileInfo): number {
  const arch = info.architectureMetadata as {
    block_count?: number;
    embedding_length?: number;
    attention?: { head_count?: number | number[]; head_count_kv?: number | number[]; key_length?: number; value_length?: number };
  };
  const blocks = arch.block_count ?? 0;
  const embd = arch.embedding_length ?? 0;
  let total = 0;
  for (let block = 0; block < blocks; block++) {
    const heads = perBlock(arch.attention?.head_count, block);
    const kvHeads = perBlock(arch.attention?.head_count_kv, block) ?? heads;
    if (heads === undefined || heads === 0 || kvHeads === undefined) continue;
    const keyLength = arch.attention?.key_length ?? embd / heads;
    const valueLength = arch.attention?.value_length ?? embd / heads;
    total += (keyLength + valueLength) * kvHeads * KV_BYTES_PER_VALUE;
  }
  return total;
}

function perBlock(value: number | number[] | undefined, block: number): number | undefined {
  return Array.isArray(value) ? value[block] : value;
}
