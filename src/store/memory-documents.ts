import { open, readdir } from "node:fs/promises";
import path from "node:path";
import { contentText, type ChatMessage } from "../shared/conversation/chat-message.js";
import { isNotFound } from "./atomic-file.js";
import { truncate } from "./memory-terms.js";
import type { HistoryEntry } from "./store-types.js";

/** One searchable unit: a finished turn, or one paragraph/section of a markdown note. */
export interface MemoryDoc {
  id: string;
  kind: "turn" | "note";
  /** The note section's heading (boosted); empty for turns. */
  title: string;
  text: string;
  /** Where it came from, shown to the model: `session:<id>@<time>` or `note:<file>#<n>`. */
  source: string;
  /** ISO time (turns: when the turn finished; notes: empty). */
  at: string;
}

export interface DocLimits {
  /** Longest text indexed per document; longer text is cut (bounds memory per document). */
  maxDocChars: number;
}

/**
 * A turn as memory sees it: what the user asked and what the assistant finally answered. Tool
 * chatter in between is left out (it is long and rarely what a later question is about).
 */
export function turnDocument(sessionId: string, entry: HistoryEntry, limits: DocLimits): MemoryDoc | null {
  const user = entry.messages.find((message) => message.role === "user");
  const answer = [...entry.messages]
    .reverse()
    .find((message): message is Extract<ChatMessage, { role: "assistant" }> => message.role === "assistant" && message.content.trim() !== "");
  const parts: string[] = [];
  const userText = user ? contentText(user.content).trim() : "";
  if (userText !== "") parts.push(`User: ${userText}`);
  if (answer && answer.content.trim() !== "") parts.push(`Assistant: ${answer.content.trim()}`);
  if (parts.length === 0) return null;
  return {
    id: `turn:${sessionId}:${entry.trace_id || entry.at}`,
    kind: "turn",
    title: "",
    text: truncate(parts.join("\n"), limits.maxDocChars),
    source: `session:${sessionId}@${entry.at}`,
    at: entry.at,
  };
}

/**
 * Splits markdown into sections: a heading starts a section and titles the paragraphs under it,
 * blank lines separate paragraphs, fenced code blocks stay whole.
 */
export function noteDocuments(fileName: string, markdown: string, limits: DocLimits): MemoryDoc[] {
  const docs: MemoryDoc[] = [];
  let heading = "";
  let paragraph: string[] = [];
  let inFence = false;
  const flush = (): void => {
    const text = paragraph.join("\n").trim();
    paragraph = [];
    if (text === "") return;
    const n = docs.length + 1;
    docs.push({ id: `note:${fileName}#${n}`, kind: "note", title: heading, text: truncate(text, limits.maxDocChars), source: `note:${fileName}#${n}`, at: "" });
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const headingMatch = inFence ? null : /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (headingMatch) {
      flush();
      heading = headingMatch[1] ?? "";
    } else if (!inFence && line.trim() === "") {
      flush();
    } else {
      paragraph.push(line);
    }
  }
  flush();
  return docs;
}

export interface NoteLimits extends DocLimits {
  maxNoteDocs: number;
  maxNoteFileBytes: number;
}

/**
 * Reads `*.md` files directly in the notes folder (regular files only: a symlink could point
 * anywhere), in name order, up to the limits. A missing folder means no notes.
 */
export async function readNoteDocuments(dir: string, limits: NoteLimits, onSkip: (file: string, why: string) => void): Promise<MemoryDoc[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
  const files = entries.filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith(".md")).map((entry) => entry.name).sort();
  const docs: MemoryDoc[] = [];
  for (const name of files) {
    if (docs.length >= limits.maxNoteDocs) {
      onSkip(name, `over the limit of ${limits.maxNoteDocs} note sections`);
      break;
    }
    try {
      const text = await readHead(path.join(dir, name), limits.maxNoteFileBytes);
      if (text.truncated) onSkip(name, `only the first ${limits.maxNoteFileBytes} bytes are indexed`);
      docs.push(...noteDocuments(name, text.text, limits).slice(0, limits.maxNoteDocs - docs.length));
    } catch (error) {
      onSkip(name, error instanceof Error ? error.message : "unreadable");
    }
  }
  return docs;
}

/** At most `maxBytes` of a file (bounded memory whatever sits in the folder). */
async function readHead(file: string, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes + 1, 0);
    const truncated = bytesRead > maxBytes;
    return { text: buffer.subarray(0, Math.min(bytesRead, maxBytes)).toString("utf8"), truncated };
  } finally {
    await handle.close();
  }
}
