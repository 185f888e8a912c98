/**
 * Bytes per block and values per block of every ggml tensor type a GGUF file may hold (ggml.c's
 * type_traits), so the size of a tensor's data is known from its header entry alone, in JS,
 * without loading llama.cpp. A unit test checks this table against llama.cpp's own numbers.
 * Types llama.cpp no longer loads (4-5 Q4_2/Q4_3; 31-33 and 36-38, the old repacked Q4_0/IQ4_NL
 * layouts) have no entry: a tensor of an unknown type is not sized (the check skips it).
 */
const SIZES: ReadonlyMap<number, { blockValues: number; blockBytes: number }> = new Map([
  [0, { blockValues: 1, blockBytes: 4 }], // F32
  [1, { blockValues: 1, blockBytes: 2 }], // F16
  [2, { blockValues: 32, blockBytes: 18 }], // Q4_0
  [3, { blockValues: 32, blockBytes: 20 }], // Q4_1
  [6, { blockValues: 32, blockBytes: 22 }], // Q5_0
  [7, { blockValues: 32, blockBytes: 24 }], // Q5_1
  [8, { blockValues: 32, blockBytes: 34 }], // Q8_0
  [9, { blockValues: 32, blockBytes: 36 }], // Q8_1
  [10, { blockValues: 256, blockBytes: 84 }], // Q2_K
  [11, { blockValues: 256, blockBytes: 110 }], // Q3_K
  [12, { blockValues: 256, blockBytes: 144 }], // Q4_K
  [13, { blockValues: 256, blockBytes: 176 }], // Q5_K
  [14, { blockValues: 256, blockBytes: 210 }], // Q6_K
  [15, { blockValues: 256, blockBytes: 292 }], // Q8_K
  [16, { blockValues: 256, blockBytes: 66 }], // IQ2_XXS
  [17, { blockValues: 256, blockBytes: 74 }], // IQ2_XS
  [18, { blockValues: 256, blockBytes: 98 }], // IQ3_XXS
  [19, { blockValues: 256, blockBytes: 50 }], // IQ1_S
  [20, { blockValues: 32, blockBytes: 18 }], // IQ4_NL
  [21, { blockValues: 256, blockBytes: 110 }], // IQ3_S
  [22, { blockValues: 256, blockBytes: 82 }], // IQ2_S
  [23, { blockValues: 256, blockBytes: 136 }], // IQ4_XS
  [24, { blockValues: 1, blockBytes: 1 }], // I8
  [25, { blockValues: 1, blockBytes: 2 }], // I16
  [26, { blockValues: 1, blockBytes: 4 }], // I32
  [27, { blockValues: 1, blockBytes: 8 }], // I64
  [28, { blockValues: 1, blockBytes: 8 }], // F64
  [29, { blockValues: 256, blockBytes: 56 }], // IQ1_M
  [30, { blockValues: 1, blockBytes: 2 }], // BF16
  [34, { blockValues: 256, blockBytes: 54 }], // TQ1_0
  [35, { blockValues: 256, blockBytes: 66 }], // TQ2_0
  [39, { blockValues: 32, blockBytes: 17 }], // MXFP4
  [40, { blockValues: 64, blockBytes: 36 }], // NVFP4
  [41, { blockValues: 128, blockBytes: 18 }], // Q1_0
  [42, { blockValues: 64, blockBytes: 18 }], // Q2_0
]);

/** The ggml type ids this table knows. */
export function knownGgmlTypes(): number[] {
  return [...SIZES.keys()];
}

export function ggmlTypeSize(type: number): { blockValues: number; blockBytes: number } | undefined {
  return SIZES.get(type);
}

/**
 * Bytes of one tensor's data: rows of `dimensions[0]` values, packed in blocks. undefined for a
 * type this table does not know (a newer ggml type: the caller then cannot judge the file).
 */
export function tensorDataBytes(type: number, dimensions: readonly (number | bigint)[]): number | undefined {
  const size = SIZES.get(type);
  if (size === undefined) return undefined;
  const counts = dimensions.map(Number);
  const rowValues = counts[0] ?? 1;
  const rows = counts.slice(1).reduce((product, count) => product * count, 1);
  return Math.ceil(rowValues / size.blockValues) * size.blockBytes * rows;
}
