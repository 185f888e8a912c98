import { open, readFile, rename } from "node:fs/promises";
import path from "node:path";
import { errorCode, freeName, fsyncDir, isNotFound, writeFileAtomic, writeNewFile } from "./atomic-file.js";
import { isHistoryEntry } from "./record-schemas.js";
import { fileTimestamp } from "./session-paths.js";
import type { HistoryEntry } from "./store-types.js";

/**
 * history.jsonl: one HistoryEntry per line, appended once per finished turn and fsynced. Appends
 * are the only writes in normal operation, so a kill can at worst leave a torn last line; a bad
 * line in the middle means outside damage. Loading repairs both: every line that parses as an
 * entry is kept (in order), the rest is dropped, the original bytes go to
 * `history.jsonl.corrupt-<timestamp>` and the caller gets a warning. Never a throw, never silent.
 * Callers hold the session lock while loading (the repair rewrites the file).
 */

export interface ParsedHistory {
  entries: HistoryEntry[];
  /** 1-based numbers of the lines that are not a valid entry (blank lines are not counted). */
  badLines: number[];
  /** The last line had no newline and was not a valid entry: a write cut short by a kill. */
  tornTail: boolean;
}

/** Splits and checks without touching the disk. */
export function parseHistory(text: string): ParsedHistory {
  const lines = text.split("\n");
  const endsWithNewline = text.endsWith("\n");
  const entries: HistoryEntry[] = [];
  const badLines: number[] = [];
  let tornTail = false;
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const entry = parseLine(line);
    if (entry) {
      entries.push(entry);
      return;
    }
    badLines.push(index + 1);
    if (index === lines.length - 1 && !endsWithNewline) tornTail = true;
  });
  return { entries, badLines, tornTail };
}

function parseLine(line: string): HistoryEntry | null {
  try {
    const value: unknown = JSON.parse(line);
    return isHistoryEntry(value) ? value : null;
  } catch {
    return null;
  }
}

export function serializeEntries(entries: readonly HistoryEntry[]): string {
  return entries.map((entry) => `${JSON.stringify(entry)}\n`).join("");
}

/** Read-only and tolerant: the valid entries, bad lines skipped. For readers that must not write (memory). */
export async function readHistoryEntries(file: string): Promise<HistoryEntry[]> {
  try {
    return parseHistory(await readFile(file, "utf8")).entries;
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

/** The trace id of the history's last line, or null (no file, empty, or a last line that is not a whole entry). */
export async function lastEntryTraceId(file: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  const last = text.trimEnd().split("\n").at(-1) ?? "";
  return parseLine(last)?.trace_id ?? null;
}

export interface RepairedHistory {
  entries: HistoryEntry[];
  warnings: string[];
}

/** Loads the history, repairing it on disk when some of it cannot be read. */
export async function loadHistoryFile(file: string, now: () => Date = () => new Date()): Promise<RepairedHistory> {
  let raw: Buffer;
  try {
    raw = await readFile(file);
  } catch (error) {
    if (isNotFound(error)) return { entries: [], warnings: [] };
    return { entries: [], warnings: [await moveAside(file, error, now())] };
  }
  const parsed = parseHistory(raw.toString("utf8"));
  if (parsed.badLines.length === 0) return { entries: parsed.entries, warnings: [] };

  // Forensics first, then the rewrite: a crash in between leaves the original in place to repair again.
  try {
    const kept = await writeNewFile(`${file}.corrupt-${fileTimestamp(now())}`, raw);
    await writeFileAtomic(file, serializeEntries(parsed.entries));
    return { entries: parsed.entries, warnings: [repairWarning(parsed, path.basename(kept))] };
  } catch (error) {
    // Disk full or read-only: still answer with what could be read; appends stay safe (see below).
    const reason = errorCode(error) ?? "unknown error";
    const warning = `session history is damaged (first bad line ${parsed.badLines[0] ?? 0}) and could not be repaired on disk (${reason}): using its ${parsed.entries.length} good turns`;
    return { entries: parsed.entries, warnings: [warning] };
  }
}

function repairWarning(parsed: ParsedHistory, keptName: string): string {
  const turns = parsed.entries.length;
  const firstBad = parsed.badLines[0] ?? 0;
  const dropped = parsed.badLines.length;
  const keptNote = `bad data kept in ${keptName}`;
  if (turns === 0) {
    return `session history was unreadable (no valid turn in it, first bad line ${firstBad}): reset to an empty history (${keptNote})`;
  }
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (parsed.tornTail && dropped === 1) {
    return `session history was corrupt at line ${firstBad} (a torn last line, likely a kill mid-write): repaired to the last ${plural(turns, "good turn")} (${keptNote})`;
  }
  return `session history was corrupt at line ${firstBad}: repaired to the last ${plural(turns, "good turn")}, dropped ${plural(dropped, "bad line")} (${keptNote})`;
}

/** A history that cannot even be read (EISDIR, EACCES, too large): move it aside, start empty. */
async function moveAside(file: string, cause: unknown, date: Date): Promise<string> {
  const reason = errorCode(cause) ?? (cause instanceof Error ? cause.message : "unknown error");
  try {
    const target = await freeName(`${file}.corrupt-${fileTimestamp(date)}`);
    await rename(file, target);
    await fsyncDir(path.dirname(file));
    return `session history could not be read (${reason}): reset to an empty history (the old file was moved to ${path.basename(target)})`;
  } catch (error) {
    const moveReason = errorCode(error) ?? "unknown error";
    return `session history could not be read (${reason}) nor moved aside (${moveReason}): continuing without history`;
  }
}

/**
 * Appends one entry as one line and fsyncs before returning. If the file ends in a torn line (a
 * kill after the last load), a newline goes first so the new entry never glues onto the fragment.
 * A write that fails in this process is rolled back (truncated to the old size) before rethrowing.
 */
export async function appendHistoryEntry(file: string, entry: HistoryEntry): Promise<void> {
  const handle = await open(file, "a+", 0o600);
  let created = false;
  try {
    const { size } = await handle.stat();
    created = size === 0;
    let prefix = "";
    if (size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    // One buffer, one write: a kill cuts it short at worst, leaving a torn last line to repair.
    try {
      await handle.writeFile(`${prefix}${JSON.stringify(entry)}\n`);
      await handle.sync();
    } catch (error) {
      // A failed write (disk full, file too large) may have left part of the line: take it back
      // so the file still ends on a whole entry. If even that fails, the next load repairs it.
      await handle.truncate(size).catch(() => undefined);
      throw error;
    }
  } finally {
    await handle.close();
  }
  // A new file is a new name in the folder: make that durable too.
  if (created) await fsyncDir(path.dirname(file));
}
