// GGUF files that are broken in the ways that matter to the planner: the tiny model's tensors
// and vocab, with one piece of metadata removed or zeroed. Never loaded natively (that is the
// point: llama.cpp aborts the process on some of them).
import { GgmlType, llamaMetadata, llamaTensorSlots, rowChunks, tinyHParams, tinyVocab, writeGguf, type GgufValue } from "../fixtures/gguf/index.js";

/** The tiny model's metadata after `edit` (delete or replace keys), with small F32 tensors. */
export async function writeEditedTinyModel(path: string, edit: (metadata: Record<string, GgufValue>) => void): Promise<string> {
  const hp = tinyHParams();
  const { vocab } = tinyVocab();
  const metadata: Record<string, GgufValue> = { ...llamaMetadata(hp, { vocab, bosId: 1, eosId: 2, unkId: 0, addBos: true, addSpacePrefix: true }) };
  edit(metadata);
  const tensors = llamaTensorSlots(hp, vocab.tokens.length).map((slot) => ({
    name: slot.name,
    shape: slot.shape,
    type: GgmlType.F32,
    data: () => rowChunks(slot.shape, (_row, out) => out.fill(0.01)),
  }));
  await writeGguf(path, { metadata, tensors });
  return path;
}
