import { randomUUID } from "node:crypto";
import { readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ensurePrivateDir } from "../shared/private-dir.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { assertSafeId, isSafeId } from "../shared/safe-id.js";
import { storeName } from "../shared/store-name.js";

const stateSchema = z.object({ session_id: z.string().min(1), pod_name: z.string().min(1) });

export type PodStateRecord = z.output<typeof stateSchema>;

/**
 * `<data_dir>/pods/<storeName of the name>.json`: the session a pod serves, so a restarted pod
 * continues it (pods `Dev` and `dev` keep apart on a case-insensitive disk too).
 */
export function podStatePath(dataDir: string, podName: string): string {
  return path.join(dataDir, "pods", `${storeName(podName)}.json`);
}

/**
 * What an earlier version remembered for this pod under `pods/<raw name>.json`: that exact name,
 * naming this pod (on a case-insensitive disk the file can be another pod's), else null.
 */
async function legacyState(dataDir: string, podName: string): Promise<{ file: string; text: string } | null> {
  const name = `${podName}.json`;
  const file = path.join(dataDir, "pods", name);
  if (file === podStatePath(dataDir, podName)) return null;
  const names = await readdir(path.dirname(file)).catch((): string[] => []);
  if (!names.includes(name)) return null;
  const text = await readFile(file, "utf8").catch(() => "");
  return parseState(text)?.pod_name === podName ? { file, text } : null;
}

function parseState(text: string): PodStateRecord | undefined {
  try {
    return stateSchema.safeParse(JSON.parse(text) as unknown).data;
  } catch {
    return undefined;
  }
}

/**
 * The session of the pod `podName`: `--session` when given (and remembered), else the one the
 * state file remembers, else a new id (remembered). An unreadable file is replaced, never fatal.
 */
export async function resolvePodSession(dataDir: string, podName: string, requested: string | undefined): Promise<{ sessionId: string; file: string; created: boolean }> {
  // The name becomes a file name.
  if (!isSafeId(podName)) throw new RuntimeError("invalid_request", `pod name ${JSON.stringify(podName.slice(0, 80))} is not allowed: use 1-64 letters, digits, "_", "-" or "." and do not start with "."`);
  const file = podStatePath(dataDir, podName);
  const current = await readFile(file, "utf8").catch(() => null);
  const legacy = current === null ? await legacyState(dataDir, podName) : null;
  const text = current ?? legacy?.text;
  const remembered = text === undefined ? undefined : parseState(text)?.session_id;
  const sessionId = assertSafeId("session_id", requested ?? remembered ?? randomUUID());
  if (sessionId !== remembered || legacy !== null) {
    await ensurePrivateDir(path.dirname(file), dataDir);
    const record: PodStateRecord = { session_id: sessionId, pod_name: podName };
    // Temp + rename: a crash never leaves a torn state file.
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    await rename(temp, file);
    // The earlier version's file has been carried over to the new name.
    if (legacy !== null) await unlink(legacy.file).catch(() => undefined);
  }
  return { sessionId, file, created: remembered === undefined && requested === undefined };
}
