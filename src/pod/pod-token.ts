// The pod token (Windows): a random secret in <data_dir>/pod.token, which only the user can read
// (data_dir sits in the user's profile; the file is created owner-only where modes mean anything).
// A client proves it is that user by sending it as its first line.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../store/atomic-file.js";

/** Reads the token, creating it (32 random bytes, hex) on first use. */
export async function ensurePodToken(file: string): Promise<string> {
  const existing = await readPodToken(file);
  if (existing !== null) return existing;
  const token = randomBytes(32).toString("hex");
  await writeFileAtomic(file, `${token}\n`);
  return token;
}

/** The token in `file`, or null when there is none (no pod has run on this data dir). */
export async function readPodToken(file: string): Promise<string | null> {
  try {
    const text = (await readFile(file, "utf8")).trim();
    return /^[0-9a-f]{64}$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

/** The client's first line. */
export function handshakeLine(token: string): string {
  return `${JSON.stringify({ token })}\n`;
}

/** Does `line` carry `token`? Compared in constant time. */
export function handshakeMatches(line: string, token: string): boolean {
  let sent: unknown;
  try {
    sent = (JSON.parse(line) as { token?: unknown }).token;
  } catch {
    return false;
  }
  if (typeof sent !== "string") return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
