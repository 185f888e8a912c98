import { statfs, stat } from "node:fs/promises";
import path from "node:path";
import { RuntimeError } from "../shared/runtime-error.js";
import type { RemoteModel } from "./remote-gguf.js";

/** What a file may hold past what its header describes: the last tensor's alignment padding, with room to spare. */
export const SIZE_SLACK_BYTES = 1024 * 1024;

/**
 * The bytes a download of this model should be, from its headers (tensor data offset + the
 * furthest tensor's end, per file), checked against the sizes its server advertises: a server
 * whose file is larger (a lying header, or a body of anything but the model) or smaller (cut short)
 * than the header describes is refused before any body is downloaded. undefined when neither side
 * knows (a tensor type without a known size and no size advertised). Throws model_missing with
 * `reason: "size_mismatch"`; `--force` does not override it.
 */
export function expectedDownloadBytes(remote: RemoteModel): number | undefined {
  const groups = remote.binaryParts ? [remote.parts] : remote.parts.map((part) => [part]);
  let total = 0;
  for (const group of groups) {
    const described = group[0]?.describedBytes;
    const advertised = group.every((part) => part.advertisedBytes !== undefined) ? group.reduce((sum, part) => sum + (part.advertisedBytes ?? 0), 0) : undefined;
    if (described !== undefined && advertised !== undefined && (advertised < described || advertised > described + SIZE_SLACK_BYTES)) {
      const url = group[0]?.url ?? remote.ref;
      throw new RuntimeError(
        "model_missing",
        `Not downloading ${remote.ref}: the server offers ${advertised} bytes for ${url} but its GGUF header describes ${described} bytes (${advertised > described ? "a file far larger than the model it claims to be" : "a file cut short"}); it is not the model its header describes`,
        { details: { ref: remote.ref, url, reason: "size_mismatch", advertised_bytes: advertised, described_bytes: described } },
      );
    }
    const size = described ?? advertised;
    if (size === undefined) return undefined;
    total += size;
  }
  return total;
}

/**
 * Refuses (storage_full) when the file system of models_dir has less room than the download
 * still needs (`bytes`, less what a partial download already holds). The nearest existing folder
 * is asked: models_dir may not exist before the first pull.
 */
export async function assertFreeSpace(modelsDir: string, bytes: number, ref: string): Promise<void> {
  let dir = path.resolve(modelsDir);
  while (!(await stat(dir).then((stats) => stats.isDirectory(), () => false)) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const fs = await statfs(dir);
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free >= bytes) return;
  throw new RuntimeError(
    "storage_full",
    `Not downloading ${ref}: it needs ${formatBytes(bytes)} and ${modelsDir} has ${formatBytes(free)} free. Free some space (\`local-ai models rm\`), set app.models_dir to a larger disk, or pass --force (force: true) to try anyway`,
    { details: { ref, reason: "no_space", needed_bytes: bytes, free_bytes: free, models_dir: modelsDir } },
  );
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
