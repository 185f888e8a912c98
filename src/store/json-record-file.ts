import { readFile } from "node:fs/promises";
import { isNotFound } from "./atomic-file.js";

/** A small JSON record on disk (checkpoint.json, session.json) as read. */
export type JsonRecord<T> = { status: "missing" } | { status: "ok"; value: T } | { status: "unreadable" };

/**
 * Reads a record that is replaced atomically, so it is whole or absent; "unreadable" (not JSON, or
 * not the shape `accept` checks) means outside damage or a foreign version, which each caller
 * handles its own way. Other read errors (permissions, I/O) are thrown.
 */
export async function readJsonRecord<T>(file: string, accept: (value: unknown) => value is T): Promise<JsonRecord<T>> {
  let raw: string;
  try {
    raw = await readFile(file, "utf8");
  } catch (error) {
    if (isNotFound(error)) return { status: "missing" };
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { status: "unreadable" };
  }
  return accept(value) ? { status: "ok", value } : { status: "unreadable" };
}
