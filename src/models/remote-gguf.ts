import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { GgufFileInfo } from "node-llama-cpp";
import { modelReferenceKind } from "../config/model-reference.js";
import { checkGgufBounds, GgufHeaderEnded, type GgufLayout } from "../engine/gguf/gguf-bounds.js";
import { ggufMetadataProblems } from "../engine/plan/validate-gguf.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { invalidReference } from "./find-downloaded.js";
import { hubAccessOf, type HubAccess } from "./hub-access.js";
import { resolveHubReference } from "./hub-reference.js";
import { fileNameForReference } from "./reference-file.js";
import { remotePartUrls } from "./remote-parts.js";
import { RemoteFile } from "./remote-file.js";

/** Header reads fetch this much at a time (node-llama-cpp's reader read ahead as much). */
const HEADER_CHUNK_BYTES = 4 * 1024 * 1024;

/** One file of a remote model (a split model has several), as its header and its server describe it. */
export interface RemotePart {
  url: string;
  /** The URL its redirects end at, and whether requests there carry the token. */
  finalUrl: string;
  authorized: boolean;
  /** What the server says the file's size is. */
  advertisedBytes: number | undefined;
  /** What the GGUF header says it is (undefined for a tensor type without a known size, or a binary part after the first). */
  describedBytes: number | undefined;
}

export interface RemoteModel {
  ref: string;
  info: GgufFileInfo;
  /** In order; a model in binary parts (`.part1of3`) is one GGUF over all of them. */
  parts: RemotePart[];
  binaryParts: boolean;
  /** The name in models_dir (node-llama-cpp's for an hf: reference, fileNameForReference's for a URL). */
  fileName: string;
  access: HubAccess;
}

/**
 * The GGUF metadata and tensor table of a model that is not downloaded, read here by ranged GETs
 * of the header only, never the weights: every header is first walked by checkGgufBounds, which
 * refuses a header past its bounds before fetching what it claims (a lying header cannot make us
 * read without end), then the bytes read are parsed by node-llama-cpp's reader from a temporary
 * file. An `hf:` reference is resolved through the hub's manifest; a URL is read exactly as given
 * (never taken for a hub reference, whatever its host). Redirects are followed by guardedFetch
 * (HF_TOKEN to the hub's origin only). Throws model_missing or invalid_params.
 */
export async function readRemoteModel(ref: string, env: Readonly<Record<string, string | undefined>>, signal?: AbortSignal): Promise<RemoteModel> {
  const access = await hubAccessOf(env);
  const { url, fileName } = await resolveReference(ref, access, signal);
  const { urls, binary } = remotePartUrls(url);
  const parts: RemotePart[] = [];
  const layouts: GgufLayout[] = [];
  try {
    for (const [index, partUrl] of urls.entries()) {
      const file = new RemoteFile(partUrl, access, signal);
      // A binary part after the first has no header of its own: one byte tells its size and redirects.
      const layout = binary && index > 0 ? await file.read(0, 1).then(() => undefined) : await readLayout(file, partUrl);
      if (layout !== undefined) layouts.push(layout);
      parts.push({ url: partUrl, finalUrl: file.finalUrl, authorized: file.authorized, advertisedBytes: file.advertisedBytes, describedBytes: layout?.describedBytes });
    }
  } catch (error) {
    signal?.throwIfAborted();
    if (error instanceof RuntimeError) throw error;
    const message = error instanceof Error ? (error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message) : String(error);
    throw new RuntimeError("model_missing", `Cannot read the GGUF header of ${ref}: ${message} (the server cannot be reached: check the network, or HF_ENDPOINT for a mirror)`, {
      details: { ref, reason: "unreachable" },
      cause: error,
    });
  }
  const info = await parseHeaders(layouts, binary ? urls.slice(0, 1) : urls, signal);
  const problems = ggufMetadataProblems(info.metadata);
  if (problems.length > 0) {
    throw new RuntimeError("model_missing", `${ref} is not a loadable model: ${problems.join("; ")}`, { details: { ref, reason: "bad_metadata", problems } });
  }
  return { ref, info, parts, binaryParts: binary, fileName, access };
}

/** readRemoteModel's GGUF info alone (`plan --model <ref>`). */
export async function readRemoteGguf(ref: string, env: Readonly<Record<string, string | undefined>>, signal?: AbortSignal): Promise<GgufFileInfo> {
  return (await readRemoteModel(ref, env, signal)).info;
}

async function resolveReference(ref: string, access: HubAccess, signal?: AbortSignal): Promise<{ url: string; fileName: string }> {
  if (modelReferenceKind(ref) === "hf") {
    try {
      return await resolveHubReference(ref, access, signal);
    } catch (error) {
      signal?.throwIfAborted();
      const message = error instanceof Error ? error.message : String(error);
      if (/^Invalid (Hugging Face URI|URL)/.test(message)) throw invalidReference(ref, message, error);
      throw new RuntimeError("model_missing", `Cannot read the GGUF header of ${ref}: ${describeHubError(message)}`, { details: { ref, reason: "unreachable" }, cause: error });
    }
  }
  const url = ref.trim();
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error(parsed.protocol);
  } catch (error) {
    throw invalidReference(ref, "Invalid URL", error);
  }
  return { url, fileName: fileNameForReference(url) ?? "model.gguf" };
}

async function readLayout(file: RemoteFile, url: string): Promise<GgufLayout> {
  try {
    return await checkGgufBounds(file, url, { chunkBytes: HEADER_CHUNK_BYTES });
  } catch (error) {
    if (!(error instanceof GgufHeaderEnded)) throw error;
    throw new RuntimeError("model_missing", `${url} is not a valid GGUF: ${error.message}`, { details: { ref: url, reason: "invalid_gguf", problem: error.message } });
  }
}

/** node-llama-cpp's reader over the header bytes already read (bounded), part by part, joined as it joins split files. */
async function parseHeaders(layouts: GgufLayout[], urls: string[], signal?: AbortSignal): Promise<GgufFileInfo> {
  const { readGgufFileInfo } = await import("node-llama-cpp");
  const dir = await mkdtemp(path.join(os.tmpdir(), "local-ai-header-"));
  try {
    const infos: GgufFileInfo[] = [];
    for (const [index, layout] of layouts.entries()) {
      const file = path.join(dir, `part${index + 1}.gguf`);
      await writeFile(file, layout.bytes);
      const parsed = await readGgufFileInfo(file, { sourceType: "filesystem", spliceSplitFiles: false, logWarnings: false, ...(signal ? { signal } : {}) });
      if (index > 0) for (const tensor of [...(parsed.tensorInfo ?? []), ...(parsed.fullTensorInfo ?? [])]) (tensor as { filePart?: number }).filePart = index + 1;
      // As node-llama-cpp's network reader gives it: the header bytes in memory (its estimates
      // load them into llama.cpp), the URL as the source; the temporary file is gone after this.
      infos.push({ ...parsed, source: { type: "uri", uri: urls[index] ?? "" }, sourceData: [{ type: "buffer", buffer: layout.bytes.subarray(0, parsed.infoEndOffset ?? layout.bytes.length) }] });
    }
    const [first, ...rest] = infos as [GgufFileInfo, ...GgufFileInfo[]];
    if (rest.length === 0) return first;
    return {
      ...first,
      splicedParts: infos.length,
      totalTensorInfoSize: first.totalTensorInfoSize === undefined ? undefined : first.totalTensorInfoSize + rest.reduce((sum, part) => sum + (part.totalTensorInfoSize ?? 0), 0),
      totalTensorCount: Number(first.totalTensorCount) + rest.reduce((sum, part) => sum + Number(part.totalTensorCount), 0),
      totalMetadataSize: first.totalMetadataSize + rest.reduce((sum, part) => sum + part.totalMetadataSize, 0),
      fullTensorInfo: first.fullTensorInfo === undefined ? undefined : infos.flatMap((part) => part.fullTensorInfo ?? []),
      sourceData: infos.flatMap((part) => part.sourceData),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function describeHubError(message: string): string {
  if (/ 404\b|does not exist/.test(message)) return `${message} (no such repository, file or quantization: check the name; \`hf:owner/repo\` without a quantization picks Q4_K_M)`;
  if (/ 401\b| 403\b/.test(message)) return `${message} (a gated or private repository: set HF_TOKEN to a token that may read it)`;
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message)) return `${message} (the server cannot be reached: check the network, or HF_ENDPOINT for a mirror)`;
  return message;
}
