import { randomUUID } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ensurePrivateDir } from "../shared/private-dir.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { assertSafeId, isSafeId } from "../shared/safe-id.js";

const stateSchema = z.object({ session_id: z.string().min(1), pod_name: z.string().min(1) });

export type PodStateRecord = z.output<typeof stateSchema>;

/** `<data_dir>/pods/<name>.json`: the session a pod serves, so a restarted pod continues it. */
export function podStatePath(dataDir: string, podName: string): string {
  return path.join(dataDir, "pods", `${podName}.json`);
}

/**
 * The session of the pod `podName`: `--session` when given (and remembered), else the one the
 * state file remembers, else a new id (remembered). An unreadable file is replaced, never fatal.
 */
export async function resolvePodSession(dataDir: string, podName: string, requested: string | undefined): Promise<{ sessionId: string; file: string; created: boolean }> {
  // The name becomes a file name.
  if (!isSafeId(podName)) throw new RuntimeError("invalid_request", `pod name ${JSON.stringify(podName.slice(0, 80))} is not allowed: use 1-64 letters, digits, "_", "-" or "." and do not start with "."`);
  const file = podStatePath(dataDir, podName);
  const remembered = await readFile(file, "utf8").then(
    (text) => stateSchema.safeParse(JSON.parse(text) as unknown).data?.session_id,
    () => undefined,
  ).catch(() => undefined);
  const sessionId = assertSafeId("session_id", requested ?? remembered ?? randomUUID());
  if (sessionId !== remembered) {
    await ensurePrivateDir(path.dirname(file), dataDir);
    const record: PodStateRecord = { session_id: sessionId, pod_name: podName };
    // Temp + rename: a crash never leaves a torn state file.
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    await rename(temp, file);
  }
  return { sessionId, file, created: remembered === undefined && requested === undefined };
}
