// The pid file `<data_dir>/run/llama-server-<model>.pid` names the child we started, so that
// the next start can reap a server orphaned by a crash (or SIGKILL) of our own process. It is
// only a hint: nothing is killed unless the live process's command line proves it is that
// llama-server on that port (pids get reused).
import { randomBytes } from "node:crypto";
import { readFile, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { ensurePrivateDir } from "../../shared/private-dir.js";
import { storeName } from "../../shared/store-name.js";

export interface PidRecord {
  pid: number;
  port: number;
  binary: string;
  model: string;
  /** ISO time the child was spawned. */
  startedAt: string;
  /** Our process; while it lives, the child is someone's live server, not an orphan. */
  ownerPid?: number;
}

/** Model names are config keys, not file names: storeName keeps `Qwen` and `qwen` apart on any disk. */
export function pidFilePath(dataDir: string, modelName: string): string {
  return path.join(dataDir, "run", `llama-server-${storeName(modelName)}.pid`);
}

/**
 * The name earlier versions gave the pid file (raw name, unsafe characters as `_`), or null when
 * it is the current one. An orphan named only there is still reaped; on a case-insensitive disk
 * it can be another model's file, so its record must name this model.
 */
export function legacyPidFileName(modelName: string): string | null {
  const name = `llama-server-${modelName.replace(/[^A-Za-z0-9._-]/g, "_")}.pid`;
  return name === `llama-server-${storeName(modelName)}.pid` ? null : name;
}

export function formatPidFile(record: PidRecord): string {
  return `${JSON.stringify(record)}\n`;
}

const isPositiveInt = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value > 0;

/** null for anything that is not a complete record (torn write, hand edit, old format). */
export function parsePidFile(text: string): PidRecord | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const r = parsed as Record<string, unknown>;
  if (!isPositiveInt(r.pid) || !isPositiveInt(r.port) || r.port > 65535) return null;
  if (typeof r.binary !== "string" || r.binary === "" || typeof r.model !== "string" || typeof r.startedAt !== "string") return null;
  const record: PidRecord = { pid: r.pid, port: r.port, binary: r.binary, model: r.model, startedAt: r.startedAt };
  if (isPositiveInt(r.ownerPid)) record.ownerPid = r.ownerPid;
  return record;
}

/**
 * Does this command line belong to the llama-server the record describes? The executable must
 * be the recorded binary (or at least be named llama-server) and it must serve the recorded port.
 */
export function isRecordedServer(record: PidRecord, argv: readonly string[]): boolean {
  const exe = argv[0];
  if (exe === undefined) return false;
  const sameBinary = exe === record.binary || path.basename(exe).startsWith("llama-server");
  if (!sameBinary) return false;
  const portAt = argv.indexOf("--port");
  return portAt > 0 && argv[portAt + 1] === String(record.port);
}

/** A process started this long after the record was written cannot be the one it names. */
const START_SLACK_MS = 5000;

/**
 * Could the process that started at `startedAtMs` be the one the record names? Ours was spawned
 * right before its record was written; a pid reused after our server died started later. Unknown
 * start times (no /proc) give the benefit of the doubt to the command-line check alone.
 */
export function startedInTime(record: PidRecord, startedAtMs: number | null): boolean {
  if (startedAtMs === null) return true;
  const recorded = Date.parse(record.startedAt);
  return Number.isNaN(recorded) || startedAtMs <= recorded + START_SLACK_MS;
}

export async function readPidFile(file: string): Promise<PidRecord | null> {
  try {
    return parsePidFile(await readFile(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Atomic (temp + rename): a crash mid-write leaves the old file or the new one, never half. */
export async function writePidFile(file: string, record: PidRecord): Promise<void> {
  // <data_dir>/run: private like the rest of data_dir.
  await ensurePrivateDir(path.dirname(file), path.dirname(file));
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, formatPidFile(record), { mode: 0o600 });
  await rename(tmp, file);
}

/** Removes the file if it still names `pid` (a newer start may have replaced it). */
export async function removePidFile(file: string, pid?: number): Promise<void> {
  if (pid !== undefined) {
    const current = await readPidFile(file).catch(() => null);
    if (current !== null && current.pid !== pid) return;
  }
  await unlink(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}
