/** `model-00001-of-00003.gguf`: llama.cpp's (gguf-split's) naming of split GGUF files. */
const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/i;

/**
 * Every part of a split GGUF, in order, from the path of any part (node-llama-cpp reads and
 * downloads them all the same way); a single path for a file that is not split.
 */
export function splitPartPaths(path: string): string[] {
  const match = SPLIT_PART.exec(path);
  const parts = Number(match?.[2]);
  if (match === null || !Number.isInteger(parts) || parts < 1) return [path];
  const stem = path.slice(0, path.length - match[0].length);
  return Array.from({ length: parts }, (_, index) => `${stem}-${String(index + 1).padStart(5, "0")}-of-${String(parts).padStart(5, "0")}.gguf`);
}

/** True for the first part of a split GGUF, or any file that is not split (the one to load or list). */
export function isEntryPart(path: string): boolean {
  const match = SPLIT_PART.exec(path);
  return match === null || Number(match[1]) === 1;
}
