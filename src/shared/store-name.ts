import { createHash } from "node:crypto";
import { isSafeId } from "./safe-id.js";

/**
 * The one mapping from an id (user_id, session_id, pod name, model name) to the file or folder
 * name that stands for it on disk. macOS and Windows compare names case-insensitively and Windows
 * drops trailing dots and refuses device names, so the exact id cannot be the name there:
 * `Alice` and `alice` would be one folder. Design (docs/platforms.md "File names"):
 *
 * - A safe id (isSafeId) is encoded reversibly: an upper-case letter becomes `+` and the letter
 *   in lower case (`Alice` -> `+alice`, `S1` -> `+s1`); a `+` goes after a Windows device name's
 *   base (`con` -> `con+`, `com1.log` -> `com1+.log`) and after a trailing dot (`abc.` -> `abc.+`).
 *   An all-lower-case id that is none of these is its own name, so existing folders of such ids
 *   keep their names. Safe ids never contain `+`, so a name holds one only as an escape.
 * - Anything else (a model name with spaces, `/`, non-ASCII) becomes `+_` and 16 hex digits of
 *   its SHA-256; no encoded safe id contains `+_`, so the two kinds never meet.
 *
 * Every name produced uses only `a-z 0-9 _ - . +` (so two names equal case-insensitively are
 * equal), never ends with a dot or a space, never has a device name as its base, never starts
 * with `.`, and is at most 130 characters (64-character ids).
 */
export function storeName(id: string): string {
  if (!isSafeId(id)) return `+_${createHash("sha256").update(id).digest("hex").slice(0, 16)}`;
  let name = id.replace(/[A-Z]/g, (letter) => `+${letter.toLowerCase()}`);
  const dot = name.indexOf(".");
  const base = dot === -1 ? name : name.slice(0, dot);
  if (isDeviceName(base)) name = `${base}+${name.slice(base.length)}`;
  if (name.endsWith(".")) name += "+";
  return name;
}

/**
 * The exact id a name made by storeName stands for, or null when the name is not one storeName
 * makes for a safe id (a hashed name, a name from an earlier version, a stray file).
 */
export function idFromStoreName(name: string): string | null {
  let id = "";
  for (let at = 0; at < name.length; at += 1) {
    const char = name.charAt(at);
    if (char !== "+") {
      id += char;
      continue;
    }
    const next = name.charAt(at + 1);
    if (/^[a-z]$/.test(next)) {
      id += next.toUpperCase();
      at += 1;
    } else if (next !== "." && next !== "") {
      return null;
    }
  }
  return isSafeId(id) && storeName(id) === name ? id : null;
}

/**
 * The id a folder in a sessions or memory folder stands for: a name storeName made, or else the
 * exact id itself (folders of earlier versions were named by the raw id); null for anything else.
 */
export function idFromFolderName(name: string): string | null {
  if (name.includes("+")) return idFromStoreName(name);
  return isSafeId(name) ? name : null;
}

/** CON, PRN, AUX, NUL, COM0-9, LPT0-9: Windows opens the device whatever the extension. */
const DEVICE_NAME = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

export function isDeviceName(base: string): boolean {
  return DEVICE_NAME.test(base.replace(/[ .]+$/, ""));
}

/**
 * The key under which Windows and macOS (by default) see a name as the same: case folded,
 * trailing dots and spaces dropped. Two names with the same key are one file there.
 */
export function caseInsensitiveKey(name: string): string {
  return name.replace(/[ .]+$/, "").toLowerCase();
}
