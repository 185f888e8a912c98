import { readdir } from "node:fs/promises";
import path from "node:path";
import type { CheckResult } from "../doctor-report.js";
import { ok, warn } from "../check-result.js";
import { caseInsensitiveKey, idFromFolderName, storeName } from "../../shared/store-name.js";

const ID = "store_names";
const TITLE = "Store names";
/** Examples named in the finding; `data` holds them all up to this many too. */
const MAX_LISTED = 20;

/**
 * Names under data_dir that macOS and Windows would take for one (same letters up to case,
 * trailing dots or spaces): `sessions/Alice` and `sessions/alice` there are one folder, so one
 * user would read the other's history. Current versions never make such names (storeName);
 * folders of earlier versions can hold them until the store renames them on first use, which this
 * check also counts. It only reads folder listings.
 */
export async function checkStoreNames(dataDir: string): Promise<CheckResult> {
  const collisions: string[][] = [];
  const legacy: string[] = [];
  const look = async (relative: string, legacyNames: boolean): Promise<string[]> => {
    const names = await list(path.join(dataDir, relative));
    const groups = new Map<string, string[]>();
    for (const name of names) groups.set(caseInsensitiveKey(name), [...(groups.get(caseInsensitiveKey(name)) ?? []), name]);
    for (const group of groups.values()) if (group.length > 1) collisions.push(group.map((name) => path.join(relative, name)));
    if (legacyNames) {
      for (const name of names) {
        const id = idFromFolderName(name);
        if (id !== null && storeName(id) !== name) legacy.push(path.join(relative, name));
      }
    }
    return names;
  };
  for (const user of await look("sessions", true)) await look(path.join("sessions", user), true);
  await look("memory", true);
  for (const folder of ["pods", "run", "kv-cache"]) await look(folder, false);

  const data = { collisions: collisions.slice(0, MAX_LISTED), legacy: legacy.slice(0, MAX_LISTED), collision_count: collisions.length, legacy_count: legacy.length };
  const later = legacy.length > 0 ? `; ${legacy.length} folder(s) named by an earlier version (${legacy.slice(0, 3).join(", ")}) get their new names on first use` : "";
  if (collisions.length > 0) {
    const named = collisions.slice(0, 3).map((group) => group.join(" and ")).join("; ");
    return warn(
      ID,
      TITLE,
      `${collisions.length} group(s) of names are one file or folder on macOS and Windows: ${named}${later}`,
      "start local-ai once on this machine before copying data_dir to macOS or Windows: it renames folders of earlier versions so that no two collide (a pod or model file is renamed when that pod or model next starts)",
      data,
    );
  }
  return ok(ID, TITLE, `no two names under ${dataDir} collide case-insensitively${later}`, data);
}

async function list(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
