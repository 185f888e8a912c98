// The model the pull tests download, and a look into the partial file a cut download leaves.
import { open } from "node:fs/promises";
import type { BenchShape } from "../fixtures/gguf/index.js";

/** A llama of ~33 MB (7 of ipull's 5 MiB chunks): big enough to cut mid-file, quick to write. */
export const PULL_FIXTURE_SHAPE: BenchShape = {
  embeddingLength: 512,
  blockCount: 2,
  headCount: 4,
  headCountKv: 1,
  feedForwardLength: 1024,
  vocabSize: 12000,
  contextLength: 2048,
  tensorType: "f16",
};

/**
 * The byte ranges ([start, end), in file order) a partial download (`<file>.ipull`, written by
 * node-llama-cpp's downloader ipull) holds in finished chunks: the file data is followed by
 * ipull's resume state, JSON `{chunks, chunkSize}` with chunk status 2 = complete. What a
 * resumed pull must not fetch again.
 */
export async function partialFileKeptRanges(partial: string, size: number): Promise<Array<{ start: number; end: number }>> {
  const handle = await open(partial, "r");
  try {
    const total = (await handle.stat()).size;
    const buffer = Buffer.alloc(total - size);
    await handle.read(buffer, 0, buffer.length, size);
    const state = JSON.parse(buffer.toString("utf8")) as { chunks: number[]; chunkSize: number };
    return state.chunks.flatMap((status, index) =>
      status === 2 ? [{ start: index * state.chunkSize, end: Math.min(size, (index + 1) * state.chunkSize) }] : [],
    );
  } finally {
    await handle.close();
  }
}
