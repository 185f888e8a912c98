import { open, type FileHandle } from "node:fs/promises";
import { RuntimeError } from "../../shared/runtime-error.js";

/** The fixed-size start of every GGUF file: magic, version, tensor count, metadata key/value count. */
export const GGUF_HEADER_BYTES = 24;
/** "GGUF" as bytes; read as a little-endian uint32 this is 0x46554747. */
export const GGUF_MAGIC = Buffer.from("GGUF", "latin1");
/** llama.cpp dropped v1 long ago; v2 and v3 differ only in details it still reads. */
export const SUPPORTED_GGUF_VERSIONS: readonly number[] = [2, 3];

export interface GgufHeader {
  version: number;
  tensorCount: bigint;
  metadataCount: bigint;
  fileSize: number;
}

/** Why a file is not a usable GGUF model; carried in `RuntimeError.details.reason`. */
export type GgufHeaderProblem = "missing" | "not_a_file" | "unreadable" | "too_short" | "bad_magic" | "unsupported_version";

function problem(path: string, reason: GgufHeaderProblem, message: string, cause?: unknown): RuntimeError {
  return new RuntimeError("model_missing", message, { details: { path, reason }, ...(cause === undefined ? {} : { cause }) });
}

/**
 * Reads only the first 24 bytes, so checking a 40 GB model costs the same as checking a tiny one.
 * Throws a RuntimeError("model_missing") whose message says in plain words what is wrong.
 */
export async function readGgufHeader(path: string): Promise<GgufHeader> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw openProblem(path, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw problem(path, "not_a_file", `${path} is not a regular file (a directory or device?)`);
    const buffer = Buffer.alloc(GGUF_HEADER_BYTES);
    let read: number;
    try {
      ({ bytesRead: read } = await handle.read(buffer, 0, GGUF_HEADER_BYTES, 0));
    } catch (error) {
      // EISDIR surfaces here on some platforms rather than at open().
      throw openProblem(path, error);
    }
    const head = buffer.subarray(0, read);
    if (read >= 4 && !head.subarray(0, 4).equals(GGUF_MAGIC)) {
      throw problem(path, "bad_magic", `${path} is not a GGUF file: ${describeForeignStart(head)}`);
    }
    if (read < GGUF_HEADER_BYTES) {
      throw problem(path, "too_short", `${path} is too short to be a GGUF model (${stats.size} bytes; the header alone is ${GGUF_HEADER_BYTES}); the download or copy is probably incomplete`);
    }
    const version = buffer.readUInt32LE(4);
    if (!SUPPORTED_GGUF_VERSIONS.includes(version)) {
      throw problem(path, "unsupported_version", `${path} is GGUF version ${describeVersion(version, buffer.readUInt32BE(4))}; supported versions are ${SUPPORTED_GGUF_VERSIONS.join(" and ")}`);
    }
    return {
      version,
      tensorCount: buffer.readBigUInt64LE(8),
      metadataCount: buffer.readBigUInt64LE(16),
      fileSize: stats.size,
    };
  } finally {
    await handle.close();
  }
}

function openProblem(path: string, error: unknown): RuntimeError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return problem(path, "missing", `no file at ${path}`, error);
  if (code === "EISDIR") return problem(path, "not_a_file", `${path} is a directory, not a GGUF file`, error);
  if (code === "EACCES" || code === "EPERM") return problem(path, "unreadable", `${path} cannot be read: permission denied`, error);
  return problem(path, "unreadable", `${path} cannot be read: ${(error as Error).message}`, error);
}

/** Common look-alikes get a name, so the user knows what they downloaded instead. */
function describeForeignStart(head: Buffer): string {
  const text = head.toString("latin1");
  if (text.startsWith("version https://git-lfs")) return "it is a Git LFS pointer, not the model itself";
  if (/^\s*</.test(text)) return "it looks like an HTML page (a failed or login-walled download?)";
  const legacy: Record<string, string> = { tjgg: "GGJT", lmgg: "GGML", fmgg: "GGMF", algg: "GGLA" };
  const old = legacy[text.slice(0, 4)];
  if (old !== undefined) return `it is in the old ${old} format, which llama.cpp no longer loads`;
  const hex = [...head.subarray(0, 4)].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
  return `it starts with bytes ${hex} instead of "GGUF" (47 47 55 46)`;
}

function describeVersion(littleEndian: number, bigEndian: number): string {
  if (SUPPORTED_GGUF_VERSIONS.includes(bigEndian)) return `${bigEndian} in big-endian byte order, which this machine cannot load`;
  if (littleEndian === 1) return "1, an early format llama.cpp no longer loads";
  return String(littleEndian);
}
