/**
 * llama.cpp file types (`general.file_type`, llama_ftype) by name, and the quantizations we suggest
 * when a model does not fit. The bits-per-weight figures are typical whole-file averages for
 * llama-style models (llama.cpp's quantize tool reports similar ones); good enough to say
 * "a Q4_K_M file would be about 4.1 GiB", not to plan with.
 */
const FILE_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
  11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M",
  18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S",
  25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M",
  32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
};

/** "Q4_K_M" for 15; a file without the key is named by its bits per weight instead. */
export function fileTypeName(fileType: number | undefined, bitsPerWeight: number): string {
  if (fileType !== undefined) {
    const name = FILE_TYPE_NAMES[fileType];
    if (name !== undefined) return name;
    return `file type ${fileType}`;
  }
  return `~${bitsPerWeight.toFixed(1)} bits/weight`;
}

export interface QuantizationOption {
  name: string;
  bitsPerWeight: number;
}

/** From best quality down; each is a common download choice for GGUF models. */
export const SUGGESTED_QUANTIZATIONS: readonly QuantizationOption[] = [
  { name: "Q8_0", bitsPerWeight: 8.5 },
  { name: "Q6_K", bitsPerWeight: 6.6 },
  { name: "Q5_K_M", bitsPerWeight: 5.7 },
  { name: "Q4_K_M", bitsPerWeight: 4.9 },
  { name: "Q3_K_M", bitsPerWeight: 3.9 },
  { name: "Q2_K", bitsPerWeight: 3.0 },
];

/** Approximate weight bytes of `parameters` at `bitsPerWeight`. */
export function weightsBytesAt(parameters: number, bitsPerWeight: number): number {
  return Math.ceil((parameters * bitsPerWeight) / 8);
}
