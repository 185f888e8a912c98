/**
 * A model `path` (and `local-ai pull`'s argument) is a local path or a reference to download:
 * an http(s) URL, or a Hugging Face reference (`hf:owner/repo:Q4_K_M`, `hf:owner/repo/file.gguf`;
 * `huggingface:` is the long spelling). Only the syntax is decided here; src/models resolves it.
 */
export type ModelReferenceKind = "path" | "url" | "hf";

const HF_PREFIXES = ["hf:", "huggingface:"];

export function modelReferenceKind(text: string): ModelReferenceKind {
  const lower = text.trim().toLowerCase();
  if (HF_PREFIXES.some((prefix) => lower.startsWith(prefix))) return "hf";
  if (lower.startsWith("https://") || lower.startsWith("http://")) return "url";
  return "path";
}

/** True for something to download (a URL or an hf: reference), false for a local path. */
export function isModelReference(text: string): boolean {
  return modelReferenceKind(text) !== "path";
}
