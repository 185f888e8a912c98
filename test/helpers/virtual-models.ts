// GGUF models that exist only as a header: served as header + zeros (model-file-server's
// virtualSource), so a fit check or a plan can run against a model of any size without a byte
// of it on disk. The shapes are llama's; the vocabulary is small (the header stays small).
import { benchVocab, encodeGgufHeader, GgmlType, llamaMetadata, llamaTensorSlots, type LlamaHParams } from "../fixtures/gguf/index.js";

export interface VirtualModel {
  header: Uint8Array;
  totalBytes: number;
  parameters: number;
}

function virtualLlama(hp: LlamaHParams, vocabSize: number): VirtualModel {
  const vocab = benchVocab(vocabSize);
  const slots = llamaTensorSlots(hp, vocabSize);
  const tensors = slots.map((slot) => ({ name: slot.name, shape: slot.shape, type: slot.shape.length === 1 ? GgmlType.F32 : GgmlType.F16 }));
  const { header, totalBytes } = encodeGgufHeader({
    metadata: llamaMetadata(hp, { vocab, bosId: 1, eosId: 2, unkId: 0, addBos: true, addSpacePrefix: true }),
    tensors,
  });
  const parameters = slots.reduce((sum, slot) => sum + slot.shape.reduce((a, b) => a * b, 1), 0);
  return { header, totalBytes, parameters };
}

/** ~1.1B parameters in F16 (~2.2 GB): fits a machine with a few GiB free. */
export function midsizeModel(): VirtualModel {
  return virtualLlama(
    { name: "virtual-1b", contextLength: 4096, embeddingLength: 2048, blockCount: 24, feedForwardLength: 5632, headCount: 16, headCountKv: 4, rmsEps: 1e-5, ropeFreqBase: 10000, fileType: 1 },
    512,
  );
}

/** ~380B parameters in F16 (~760 GB): fits no machine these tests run on, GPU or not. */
export function hugeModel(): VirtualModel {
  return virtualLlama(
    { name: "virtual-380b", contextLength: 8192, embeddingLength: 16384, blockCount: 120, feedForwardLength: 53248, headCount: 128, headCountKv: 8, rmsEps: 1e-5, ropeFreqBase: 10000, fileType: 1 },
    512,
  );
}
