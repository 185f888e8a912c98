import { stat } from "node:fs/promises";
import type { GgufFileInfo } from "node-llama-cpp";
import { RuntimeError } from "../../shared/runtime-error.js";
import { tensorDataBytes } from "./ggml-type-sizes.js";
import { splitPartPaths } from "./split-parts.js";

/** One file (a part of a split model) that ends before the tensor data its header describes. */
export interface Shortfall {
  /** 1-based part number (1 for a file that is not split). */
  part: number;
  /** Bytes the header's tensors need: the end of the last tensor's data. */
  neededBytes: number;
  actualBytes: number;
}

type TensorExtent = Pick<NonNullable<GgufFileInfo["fullTensorInfo"]>[number], "ggmlType" | "dimensions" | "fileOffset" | "filePart">;

/**
 * The end of the data each part must hold, from each tensor's offset and size in the header.
 * Tensors of a type this build does not know are skipped (they cannot be sized; llama.cpp will
 * say more when it loads them).
 */
export function neededBytesPerPart(tensors: readonly TensorExtent[]): Map<number, number> {
  const needed = new Map<number, number>();
  for (const tensor of tensors) {
    const bytes = tensorDataBytes(tensor.ggmlType, tensor.dimensions);
    if (bytes === undefined) continue;
    const end = Number(tensor.fileOffset) + bytes;
    const part = tensor.filePart ?? 1;
    if (end > (needed.get(part) ?? 0)) needed.set(part, end);
  }
  return needed;
}

/** The parts (by 1-based number) that are shorter than their tensors need; empty when whole. */
export function findShortfalls(tensors: readonly TensorExtent[], partSizes: readonly number[]): Shortfall[] {
  const shortfalls: Shortfall[] = [];
  for (const [part, neededBytes] of neededBytesPerPart(tensors)) {
    const actualBytes = partSizes[part - 1] ?? 0;
    if (actualBytes < neededBytes) shortfalls.push({ part, neededBytes, actualBytes });
  }
  return shortfalls.sort((a, b) => a.part - b.part);
}

/**
 * Throws model_missing (`details.reason: "truncated"`) when a local GGUF (every part of a split
 * one) ends before the data of its last tensor: an interrupted copy or download. llama.cpp would
 * otherwise fail to load it with only a vague message, after doctor and plan had passed it.
 * Needs the tensor infos (readGgufFileInfo's default).
 */
export async function assertGgufComplete(path: string, info: Pick<GgufFileInfo, "fullTensorInfo" | "infoEndOffset">): Promise<void> {
  const tensors = info.fullTensorInfo ?? [];
  const parts = splitPartPaths(path);
  const sizes = await Promise.all(parts.map((part) => stat(part).then((stats) => stats.size, () => 0)));
  if (tensors.length === 0) return;
  // Cut inside the header itself: node-llama-cpp's reader then sees zeros past the end, so the
  // metadata looks merely incomplete; the header's own end (before the data) says what it is.
  const headerEnd = Number(info.infoEndOffset);
  const shortfalls: Shortfall[] = Number.isFinite(headerEnd) && headerEnd > (sizes[0] ?? 0) ? [{ part: 1, neededBytes: headerEnd, actualBytes: sizes[0] ?? 0 }] : findShortfalls(tensors, sizes);
  const first = shortfalls[0];
  if (first === undefined) return;
  const file = parts[first.part - 1] ?? path;
  const missing = first.neededBytes - first.actualBytes;
  throw new RuntimeError(
    "model_missing",
    `${file} is truncated: its header describes ${first.neededBytes} bytes (header and tensor data) but the file has ${first.actualBytes} (${missing} bytes missing); the download or copy did not finish. Download or copy it again (for a pulled model: \`local-ai pull <ref>\` again)`,
    { details: { path: file, reason: "truncated", needed_bytes: first.neededBytes, actual_bytes: first.actualBytes, ...(parts.length > 1 ? { part: first.part, parts: parts.length } : {}) } },
  );
}
