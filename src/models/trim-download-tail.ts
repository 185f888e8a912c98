import { stat, truncate } from "node:fs/promises";

/**
 * After a finished download: cuts each file back to the size the server advertised for it when
 * it is longer. node-llama-cpp's downloader (ipull) keeps its progress as JSON written after the
 * file's last byte and cuts it off when the download ends; a progress save still in flight at
 * that moment can land after the cut (seen under load: 63 bytes of JSON after a 368,832-byte
 * model). Bytes past the advertised size are never the model's. Returns the files it trimmed.
 */
export async function trimDownloadTail(files: readonly { path: string; advertisedBytes: number | undefined }[]): Promise<string[]> {
  const trimmed: string[] = [];
  for (const { path, advertisedBytes } of files) {
    if (advertisedBytes === undefined) continue;
    const size = await stat(path).then((stats) => stats.size, () => null);
    if (size === null || size <= advertisedBytes) continue;
    await truncate(path, advertisedBytes);
    trimmed.push(path);
  }
  return trimmed;
}
