import { modelReferenceKind } from "../config/model-reference.js";

/** `model.gguf.part1of3`: a GGUF cut into byte ranges, which node-llama-cpp joins into one file. */
const BINARY_PART = /\.part\d+of\d+$/i;

/**
 * The file name a plain URL is saved under in models_dir: its last path segment, with anything but
 * letters, digits, `.`, `_` and `-` replaced, and `.gguf` at the end. Fixed in advance (rather
 * than taken from the server's Content-Disposition at download time) so that whether a URL is
 * already downloaded can be answered without the network. Every URL, whatever its host (a URL is
 * a URL, never taken for a hub reference). undefined for `hf:` references: node-llama-cpp names
 * those from the repository, also without the network.
 */
export function fileNameForReference(ref: string): string | undefined {
  if (modelReferenceKind(ref) !== "url") return undefined;
  let segment = "";
  try {
    segment = decodeURIComponent(new URL(ref).pathname.split("/").pop() ?? "");
  } catch {
    segment = "";
  }
  const safe = segment.replace(BINARY_PART, "").replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  const stem = safe === "" ? "model" : safe;
  return stem.toLowerCase().endsWith(".gguf") ? stem : `${stem}.gguf`;
}
