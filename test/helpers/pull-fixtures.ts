// The model the pull tests download, and a look into the partial file a cut download leaves.
import { open } from "node:fs/promises";
import path from "node:path";
import { gguf, GgmlType, llamaMetadata, llamaTensorSlots, rowChunks, tinyHParams, tinyVocab, writeGguf, type BenchShape, type GgufValue } from "../fixtures/gguf/index.js";

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

/**
 * A model split in two GGUF files the way llama.cpp's gguf-split names and tags them
 * (`<stem>-00001-of-00002.gguf`, `split.no`, `split.count`, `split.tensors.count`): the tiny
 * model's metadata in the first, its tensors divided between both. Returns the two paths.
 */
export async function writeSplitTinyModel(dir: string, stem: string): Promise<[string, string]> {
  const hp = tinyHParams();
  const { vocab } = tinyVocab();
  const tensors = llamaTensorSlots(hp, vocab.tokens.length).map((slot) => ({
    name: slot.name,
    shape: slot.shape,
    type: GgmlType.F32,
    data: () => rowChunks(slot.shape, (_row, out) => out.fill(0.01)),
  }));
  const half = Math.ceil(tensors.length / 2);
  const split = (no: number): Record<string, GgufValue> => ({
    "split.no": { type: "uint16", value: no },
    "split.count": { type: "uint16", value: 2 },
    "split.tensors.count": { type: "int32", value: tensors.length },
  });
  const paths: [string, string] = [path.join(dir, `${stem}-00001-of-00002.gguf`), path.join(dir, `${stem}-00002-of-00002.gguf`)];
  await writeGguf(paths[0], { metadata: { ...llamaMetadata(hp, { vocab, bosId: 1, eosId: 2, unkId: 0, addBos: true, addSpacePrefix: true }), ...split(0) }, tensors: tensors.slice(0, half) });
  await writeGguf(paths[1], { metadata: { "general.architecture": gguf.str("llama"), ...split(1) }, tensors: tensors.slice(half) });
  return paths;
}
