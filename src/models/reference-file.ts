import { modelReferenceKind } from "../config/model-reference.js";

/** `model.gguf.part1of3`: a GGUF cut into byte ranges, which node-llama-cpp joins into one file. */
const BINARY_PART = /\.part\d+of\d+$/i;

/** Hosts node-llama-cpp treats as Hugging Face (it names their files itself, from the repo). */
export function isHubUrl(url: string, env: Readonly<Record<string, string | undefined>>): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  const endpoint = env.MODEL_ENDPOINT ?? env.HF_ENDPOINT;
  if (endpoint !== undefined && endpoint !== "") {
    try {
      return new URL(endpoint).hostname === host;
    } catch {
      // An invalid endpoint is ignored by node-llama-cpp too: the default hub applies.
    }
  }
  return host === "huggingface.co" || host === "hf.co";
}

/**
 * The file name a plain URL is saved under in models_dir: its last path segment, with anything but
 * letters, digits, `.`, `_` and `-` replaced, and `.gguf` at the end. Fixed in advance (rather
 * than taken from the server's Content-Disposition at download time) so that whether a URL is
 * already downloaded can be answered without the network. undefined for `hf:` references and
 * Hugging Face URLs: node-llama-cpp names those from the repository, also without the network.
 */
export function fileNameForReference(ref: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (modelReferenceKind(ref) !== "url" || isHubUrl(ref, env)) return undefined;
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
