import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, open, stat, statfs, unlink } from "node:fs/promises";
import path from "node:path";
import type { CheckResult } from "../doctor-report.js";
import { fail, firstLine, ok, warn } from "../check-result.js";
import { formatBytes } from "../../shared/format-bytes.js";
import { isOpenToOthers } from "../../shared/private-dir.js";

const ID = "data_dir";
const TITLE = "Data directory";
/** Sessions and checkpoints are small, but a full disk turns every save into a failure. */
export const LOW_DISK_BYTES = 1024 ** 3;

/**
 * An existing data_dir is probed by really writing (write + fsync + remove), because access()
 * lies on read-only mounts and for root. A missing one is not created — doctor only looks — but
 * its nearest existing ancestor must be a writable directory so the server can create it.
 */
export async function checkDataDir(dataDir: string): Promise<CheckResult> {
  const data: Record<string, unknown> = { path: dataDir };
  const existing = await nearestExisting(dataDir);
  if (existing === null) {
    return fail(ID, TITLE, `${dataDir}: no part of this path exists`, "set app.data_dir to a folder on a mounted, writable disk", data);
  }
  if (existing.kind === "inaccessible") {
    return fail(ID, TITLE, `${dataDir} cannot be inspected: ${existing.reason}`, `make ${existing.path} accessible for this user, or set app.data_dir to a folder you can write`, data);
  }
  if (existing.kind === "file") {
    return fail(
      ID,
      TITLE,
      existing.path === dataDir ? `${dataDir} is a file, not a directory` : `${dataDir} cannot be created: ${existing.path} is a file, not a directory`,
      `set app.data_dir to a directory path, or move ${existing.path} out of the way`,
      data,
    );
  }
  if (existing.path !== dataDir) {
    try {
      await access(existing.path, constants.W_OK | constants.X_OK);
    } catch (error) {
      return fail(ID, TITLE, `${dataDir} does not exist and cannot be created in ${existing.path}: ${describeError(error)}`, `create ${dataDir} yourself, or set app.data_dir to a folder you can write`, data);
    }
    return withDiskSpace(existing.path, `${dataDir} does not exist yet; it will be created (${existing.path} is writable)`, { ...data, exists: false });
  }
  try {
    await probeWrite(dataDir);
  } catch (error) {
    return fail(ID, TITLE, `${dataDir} is not writable: ${describeError(error)}`, `make ${dataDir} writable for this user (chmod/chown), or set app.data_dir to a folder you can write`, data);
  }
  return withOpenMode(dataDir, await withDiskSpace(dataDir, `${dataDir} is writable`, { ...data, exists: true }));
}

/**
 * data_dir holds every conversation, and its folder names are user and session ids: a folder
 * other users may enter is a warning with the chmod that fixes it (the runtime also tightens it
 * the next time it writes there, docs/agent.md).
 */
async function withOpenMode(dataDir: string, result: CheckResult): Promise<CheckResult> {
  if (process.platform === "win32") return result;
  const mode = (await stat(dataDir).catch(() => null))?.mode;
  if (mode === undefined || !isOpenToOthers(mode)) return result;
  const octal = (mode & 0o777).toString(8);
  const rights = [mode & 0o044 ? "read" : null, mode & 0o022 ? "write" : null, mode & 0o011 ? "enter" : null].filter((right) => right !== null).join(", ");
  const finding = `${dataDir} is open to other users (mode ${octal}: they can ${rights} it, and list every user and session id)`;
  const fix = `chmod 700 ${shellQuote(dataDir)} (local-ai makes it 0700 itself the next time it writes there)`;
  const data = { ...result.data, mode: octal };
  return result.status === "ok" ? warn(ID, TITLE, finding, fix, data) : { ...result, finding: `${result.finding}; ${finding}`, fix: `${result.fix ?? ""}; ${fix}`, data };
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

async function withDiskSpace(dir: string, finding: string, data: Record<string, unknown>): Promise<CheckResult> {
  let free: number;
  try {
    const fs = await statfs(dir);
    free = fs.bavail * fs.bsize;
  } catch {
    // statfs is unavailable on some platforms/filesystems; writability is what matters most.
    return ok(ID, TITLE, finding, data);
  }
  const withFree = { ...data, free_bytes: free };
  if (free < LOW_DISK_BYTES) {
    return warn(ID, TITLE, `${finding}, but only ${formatBytes(free)} of disk is free`, "free some disk space, or set app.data_dir to a folder on a larger disk", withFree);
  }
  return ok(ID, TITLE, `${finding} (${formatBytes(free)} free)`, withFree);
}

type Existing = { kind: "dir" | "file"; path: string } | { kind: "inaccessible"; path: string; reason: string };

async function nearestExisting(target: string): Promise<Existing | null> {
  let current = path.resolve(target);
  for (;;) {
    try {
      const stats = await stat(current);
      return { kind: stats.isDirectory() ? "dir" : "file", path: current };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ENOTDIR: a parent of `current` is a file; keep walking up to find it and name it.
      if (code !== "ENOENT" && code !== "ENOTDIR") return { kind: "inaccessible", path: current, reason: describeError(error) };
    }
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

async function probeWrite(dir: string): Promise<void> {
  const probe = path.join(dir, `.doctor-probe-${process.pid}-${randomBytes(4).toString("hex")}`);
  const handle = await open(probe, "wx");
  try {
    await handle.writeFile("local-ai doctor write probe\n");
    await handle.sync();
  } finally {
    await handle.close();
    // A leftover probe file is harmless; the write itself is what this check is about.
    await unlink(probe).catch(() => undefined);
  }
}

function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EROFS") return "the filesystem is read-only";
  if (code === "ENOSPC") return "the disk is full";
  return firstLine((error as Error).message);
}
