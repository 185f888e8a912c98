import { open } from "node:fs/promises";
import { RuntimeError } from "../../shared/runtime-error.js";
import { checkGgufBounds, type GgufLayout } from "./gguf-bounds.js";
import { splitPartPaths } from "./split-parts.js";

/**
 * The header bounds of a local GGUF, every part of a split model, checked before node-llama-cpp's
 * reader (which trusts the counts) reads it: throws model_missing (`reason: "invalid_gguf"`) for a
 * header that lies. A part that is missing, unreadable or ends inside its header is left to the
 * checks that follow (they name those cases), and so is a file that is not GGUF v2/v3 at all: reading
 * it is bounded by its size, under the bound.
 */
export async function checkGgufFile(path: string): Promise<GgufLayout[]> {
  const layouts: GgufLayout[] = [];
  for (const part of splitPartPaths(path)) {
    const handle = await open(part, "r").catch(() => null);
    if (handle === null) continue;
    try {
      // Not a GGUF v2/v3 at all: readGgufHeader's to name (bad magic, old version), or the loader's.
      const start = Buffer.alloc(8);
      await handle.read(start, 0, 8, 0);
      if (start.toString("latin1", 0, 4) !== "GGUF" || ![2, 3].includes(start.readUInt32LE(4))) continue;
      const source = {
        read: async (offset: number, length: number): Promise<Buffer> => {
          const buffer = Buffer.alloc(length);
          const { bytesRead } = await handle.read(buffer, 0, length, offset);
          return buffer.subarray(0, bytesRead);
        },
      };
      layouts.push(await checkGgufBounds(source, part));
    } catch (error) {
      // The bound broken is ours to report; an end inside the header or a read error (a directory) is not.
      if (error instanceof RuntimeError) throw error;
    } finally {
      await handle.close();
    }
  }
  return layouts;
}
