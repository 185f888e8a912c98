import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The per-launch key as a file for `--api-key-file`, so it never appears on the command line
 * (`ps`, /proc/<pid>/cmdline are readable by every local user). Created fresh with mode 600 next to
 * the pid file; llama-server reads it while parsing its arguments, so it is removed once the
 * server is ready (or failed to start).
 */
export async function writeApiKeyFile(pidFile: string, apiKey: string): Promise<string> {
  const file = path.join(path.dirname(pidFile), `${path.basename(pidFile, ".pid")}.${randomBytes(4).toString("hex")}.key`);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // `wx`: never reuse (or follow a link to) a file someone else put there.
  await writeFile(file, `${apiKey}\n`, { mode: 0o600, flag: "wx" });
  return file;
}

export async function removeApiKeyFile(file: string | undefined): Promise<void> {
  if (file !== undefined) await rm(file, { force: true });
}
