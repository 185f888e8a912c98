import { RuntimeError } from "../../shared/runtime-error.js";
import { tensorDataBytes } from "./ggml-type-sizes.js";

/**
 * Bounds on a GGUF header (metadata and tensor table), checked before node-llama-cpp's reader sees
 * the file. Its reader trusts the counts: an array that claims 2^62 strings makes it read (a local
 * file, or ranged GETs of a remote one) and allocate until the process dies. Within the bytes it
 * still builds a JS value per array element (25-120 bytes each, a string the most), so elements
 * are bounded too: a 60 MB header of one byte array of 62.9 M elements cost 1.2 GB. The bounds are
 * what real models need with room to spare: the largest vocabularies are ~262 k tokens (Gemma 3:
 * tokens, scores and token types of 262,144 each), the largest merges ~446 k (gpt-oss, 201 k
 * tokens), ~850 k elements in all; their headers are ~12-14 MiB at most.
 */
export const GGUF_BOUNDS = {
  /** Metadata and tensor table together, from byte 0 to the end of the tensor table. */
  headerBytes: 24 * 1024 * 1024,
  /** Metadata keys (real models: a few dozen). */
  metadataKeys: 65_536,
  /** Tensors in one file (real models: a few thousand; each costs an object in the reader). */
  tensors: 65_536,
  /** Elements of one array (real models: ~446 k merges, ~262 k tokens). */
  arrayElements: 1_048_576,
  /** Elements of all arrays together, nested ones included (real models: ~850 k). */
  totalArrayElements: 1_572_864,
  /** Arrays inside arrays (GGUF allows it; llama.cpp writes none). */
  arrayDepth: 2,
  /** ggml's GGML_MAX_DIMS. */
  tensorDims: 4,
} as const;

/** Where a header's bytes come from: a file, or ranged reads of a URL. Fewer bytes than asked means the end. */
export interface GgufByteSource {
  read(offset: number, length: number): Promise<Buffer>;
}

export interface GgufLayout {
  version: number;
  tensorCount: number;
  metadataCount: number;
  /** End of the tensor table: the bytes node-llama-cpp's reader parses. */
  headerBytes: number;
  alignment: number;
  /** Where the tensor data starts (headerBytes rounded up to the alignment). */
  dataOffset: number;
  /** The file size the tensor table describes (data offset + the furthest tensor's end); undefined when a tensor's type has no known size. */
  describedBytes: number | undefined;
  /** The header's bytes with its padding (0 .. dataOffset, or as much of it as was read), for a caller that parses them again (a remote header). */
  bytes: Buffer;
}

/** The source ended inside the header: the caller decides (a local file is reported as truncated elsewhere). */
export class GgufHeaderEnded extends Error {
  constructor(readonly at: number) {
    super(`the file ends inside its header (at byte ${at})`);
  }
}

const STRING_TYPE = 8;
const ARRAY_TYPE = 9;
/** Bytes of each fixed-size metadata value type (GGUF spec: uint8 .. float64, bool). */
const FIXED_SIZES: ReadonlyMap<number, number> = new Map([
  [0, 1], [1, 1], [2, 2], [3, 2], [4, 4], [5, 4], [6, 4], [7, 1], [10, 8], [11, 8], [12, 8],
]);

/**
 * Walks the header, checking every count and length against what the rest of the bound can hold
 * before reading on, so a lying count is refused without reading (or fetching) what it claims.
 * Throws model_missing (`reason: "invalid_gguf"`) naming what is wrong; GgufHeaderEnded when the
 * bytes run out first. `label` names the file in the message (a path or a URL).
 */
export async function checkGgufBounds(source: GgufByteSource, label: string, options: { chunkBytes?: number } = {}): Promise<GgufLayout> {
  const fail = (problem: string): never => {
    throw new RuntimeError("model_missing", `${label} is not a valid GGUF: ${problem}`, { details: { path: label, reason: "invalid_gguf", problem } });
  };
  const cursor = new Cursor(source, options.chunkBytes ?? 1024 * 1024, fail);
  if ((await cursor.bytes(4)).toString("latin1") !== "GGUF") fail('it does not start with "GGUF"');
  const version = await cursor.u32();
  if (version !== 2 && version !== 3) fail(`GGUF version ${version} is not supported`);
  const tensorCount = await cursor.u64();
  const metadataCount = await cursor.u64();
  if (metadataCount > BigInt(GGUF_BOUNDS.metadataKeys)) fail(`it declares ${metadataCount} metadata keys (at most ${GGUF_BOUNDS.metadataKeys})`);
  if (tensorCount > BigInt(GGUF_BOUNDS.tensors)) fail(`it declares ${tensorCount} tensors (at most ${GGUF_BOUNDS.tensors})`);

  let alignment = 32;
  for (let index = 0n; index < metadataCount; index += 1n) {
    const key = await readString(cursor, "a metadata key", fail);
    const type = await cursor.u32();
    const value = await readValue(cursor, type, key, 0, fail);
    if (key === "general.alignment") {
      if (typeof value !== "bigint" || value <= 0n || value > 1n << 20n || (value & (value - 1n)) !== 0n) fail(`general.alignment is ${String(value)}, not a power of two`);
      alignment = Number(value);
    }
  }

  let dataEnd: bigint | undefined = 0n;
  for (let index = 0n; index < tensorCount; index += 1n) {
    const name = await readString(cursor, "a tensor name", fail);
    const dimCount = await cursor.u32();
    if (dimCount > GGUF_BOUNDS.tensorDims) fail(`tensor ${name} has ${dimCount} dimensions (at most ${GGUF_BOUNDS.tensorDims})`);
    const dims: bigint[] = [];
    for (let dim = 0; dim < dimCount; dim += 1) dims.push(await cursor.u64());
    const type = await cursor.u32();
    const offset = await cursor.u64();
    const elements = dims.reduce((product, dim) => product * dim, 1n);
    if (elements > BigInt(Number.MAX_SAFE_INTEGER) || offset > BigInt(Number.MAX_SAFE_INTEGER)) fail(`tensor ${name} declares ${elements} values at offset ${offset}, beyond any file`);
    const size = tensorDataBytes(type, dims);
    dataEnd = size === undefined || dataEnd === undefined ? undefined : bigMax(dataEnd, offset + BigInt(size));
  }
  const headerBytes = cursor.position;
  const dataOffset = Math.ceil(headerBytes / alignment) * alignment;
  const described = dataEnd === undefined ? undefined : BigInt(dataOffset) + dataEnd;
  if (described !== undefined && described > BigInt(Number.MAX_SAFE_INTEGER)) fail(`its tensors describe ${described} bytes, beyond any file`);
  return {
    version,
    tensorCount: Number(tensorCount),
    metadataCount: Number(metadataCount),
    headerBytes,
    alignment,
    dataOffset,
    describedBytes: described === undefined ? undefined : Number(described),
    bytes: cursor.buffered(dataOffset),
  };
}

async function readString(cursor: Cursor, what: string, fail: (problem: string) => never): Promise<string> {
  const length = await cursor.u64();
  cursor.budget(length, () => `${what} declares ${length} bytes, past the ${mib(GGUF_BOUNDS.headerBytes)} header bound`, fail);
  return (await cursor.bytes(Number(length))).toString("utf8");
}

/** The value itself for the few we need (integers, strings); arrays are walked, not kept. */
async function readValue(cursor: Cursor, type: number, key: string, depth: number, fail: (problem: string) => never): Promise<unknown> {
  const fixed = FIXED_SIZES.get(type);
  if (fixed !== undefined) {
    const bytes = await cursor.bytes(fixed);
    if (type === 4) return BigInt(bytes.readUInt32LE(0));
    if (type === 10) return bytes.readBigUInt64LE(0);
    return undefined;
  }
  if (type === STRING_TYPE) return readString(cursor, `the value of ${key}`, fail);
  if (type !== ARRAY_TYPE) return fail(`${key} has value type ${type}, which GGUF does not define`);
  if (depth >= GGUF_BOUNDS.arrayDepth) return fail(`${key} nests arrays deeper than ${GGUF_BOUNDS.arrayDepth}`);
  const itemType = await cursor.u32();
  const count = await cursor.u64();
  if (count > BigInt(GGUF_BOUNDS.arrayElements)) return fail(`${key} declares ${count} array elements (at most ${GGUF_BOUNDS.arrayElements} in one array)`);
  cursor.arrayElements += Number(count);
  if (cursor.arrayElements > GGUF_BOUNDS.totalArrayElements) {
    return fail(`${key} declares ${count} array elements, ${cursor.arrayElements} in all (at most ${GGUF_BOUNDS.totalArrayElements} in all arrays)`);
  }
  // The smallest an element can be: its fixed size, a string's 8-byte length, an array's 12-byte head.
  const least = FIXED_SIZES.get(itemType) ?? (itemType === STRING_TYPE ? 8 : itemType === ARRAY_TYPE ? 12 : undefined);
  if (least === undefined) return fail(`${key} is an array of value type ${itemType}, which GGUF does not define`);
  cursor.budget(count * BigInt(least), () => `${key} declares ${count} array elements, past the ${mib(GGUF_BOUNDS.headerBytes)} header bound`, fail);
  if (FIXED_SIZES.has(itemType)) {
    await cursor.bytes(Number(count) * least);
    return undefined;
  }
  if (itemType === STRING_TYPE) {
    // The hot loop (a vocabulary is 100k-250k strings, merges as many): no await while the bytes are buffered.
    const total = Number(count);
    for (let index = 0; index < total; index += 1) {
      const head = cursor.take(8);
      const buffer = head instanceof Promise ? await head : head;
      // Plain numbers: a length with high bits set is past any bound anyway.
      const length = buffer.readUInt32LE(0);
      if (buffer.readUInt32LE(4) !== 0 || cursor.position + length > GGUF_BOUNDS.headerBytes) {
        fail(`an element of ${key} declares ${buffer.readBigUInt64LE(0)} bytes, past the ${mib(GGUF_BOUNDS.headerBytes)} header bound`);
      }
      const body = cursor.take(length);
      if (body instanceof Promise) await body;
    }
    return undefined;
  }
  for (let index = 0n; index < count; index += 1n) await readValue(cursor, itemType, key, depth + 1, fail);
  return undefined;
}

/** Sequential reads over the source, buffered in chunks, never past the header bound. */
class Cursor {
  position = 0;
  /** Array elements declared so far (GGUF_BOUNDS.totalArrayElements). */
  arrayElements = 0;
  private buffer = Buffer.alloc(0);
  /** Bytes of `buffer` holding data (it grows by doubling). */
  private filled = 0;
  private end = false;

  constructor(
    private readonly source: GgufByteSource,
    private readonly chunkBytes: number,
    private readonly fail: (problem: string) => never,
  ) {}

  /** Refuses when `bytes` more cannot fit in what is left of the bound. */
  budget(bytes: bigint, problem: () => string, fail: (problem: string) => never): void {
    if (BigInt(this.position) + bytes > BigInt(GGUF_BOUNDS.headerBytes)) fail(problem());
  }

  async bytes(length: number): Promise<Buffer> {
    return this.take(length);
  }

  /** The next `length` bytes: at once when they are buffered, else once they are read. */
  take(length: number): Buffer | Promise<Buffer> {
    const end = this.position + length;
    if (end > GGUF_BOUNDS.headerBytes) this.fail(`its header is larger than ${mib(GGUF_BOUNDS.headerBytes)}`);
    if (end > this.filled) return this.fill(end).then(() => this.take(length));
    const slice = this.buffer.subarray(this.position, end);
    this.position = end;
    return slice;
  }

  async u32(): Promise<number> {
    return (await this.bytes(4)).readUInt32LE(0);
  }

  async u64(): Promise<bigint> {
    return (await this.bytes(8)).readBigUInt64LE(0);
  }

  /** A copy of the first `length` bytes read (fewer when fewer were). */
  buffered(length: number): Buffer {
    return Buffer.from(this.buffer.subarray(0, Math.min(length, this.filled)));
  }

  private async fill(needed: number): Promise<void> {
    while (this.filled < needed) {
      if (this.end) throw new GgufHeaderEnded(this.filled);
      const want = Math.min(Math.max(this.chunkBytes, needed - this.filled), GGUF_BOUNDS.headerBytes - this.filled);
      const chunk = await this.source.read(this.filled, want);
      if (chunk.length < want) this.end = true;
      if (this.filled + chunk.length > this.buffer.length) {
        const grown = Buffer.alloc(Math.min(GGUF_BOUNDS.headerBytes, Math.max(this.filled + chunk.length, this.buffer.length * 2)));
        this.buffer.copy(grown, 0, 0, this.filled);
        this.buffer = grown;
      }
      chunk.copy(this.buffer, this.filled);
      this.filled += chunk.length;
    }
  }
}

function bigMax(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function mib(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB`;
}
