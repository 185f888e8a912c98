import { spawn } from "node:child_process";
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Checkpoint, HistoryEntry } from "../../src/store/store-types.js";

/** A fresh data_dir under the OS temp folder (each test removes its own). */
export function tempDataDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), "local-ai-store-"));
}

/** A finished turn: the user's question and the assistant's answer. */
export function makeEntry(n: number, user = `question ${n}`, answer = `answer ${n}`, at = new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString()): HistoryEntry {
  return {
    trace_id: `trace-${n}`,
    agent: "assistant",
    at,
    messages: [
      { role: "user", content: user },
      { role: "assistant", content: answer },
    ],
  };
}

export function makeCheckpoint(step: number, note = ""): Checkpoint {
  return {
    version: 1,
    trace_id: "trace-cp",
    agent: "assistant",
    user_input: `input ${note}`,
    messages: [{ role: "user", content: `input ${note}` }],
    step,
    parse_errors: 0,
    status: "running",
    pending: null,
    updated_at: new Date(Date.UTC(2024, 0, 1, 0, 0, step)).toISOString(),
  };
}

/** Every file below `dir`, relative, sorted (to prove what a call did or did not create). */
export async function listTree(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      found.push(path.relative(dir, full));
      if (entry.isDirectory()) await walk(full);
    }
  };
  await walk(dir);
  return found.sort();
}

/** The pid of a process that has exited (for stale-lock tests). */
export function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => (child.pid === undefined ? reject(new Error("no pid")) : resolve(child.pid)));
  });
}
