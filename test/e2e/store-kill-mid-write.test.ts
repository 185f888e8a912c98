import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { delay } from "../../src/shared/abort.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { sessionPaths } from "../../src/store/session-paths.js";
import { expectedTurn } from "../helpers/store-kill-turns.js";
import { tempDataDir } from "../helpers/store-fixtures.js";

const APPENDER = fileURLToPath(new URL("../helpers/store-append-loop.js", import.meta.url));
const RUNS = 4;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
}

function readyOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", () => resolve());
    child.on("exit", () => reject(new Error("appender exited before it was ready")));
  });
}

/**
 * What any interrupted appender must leave: whole turns 0..n-1 in order, one per complete line,
 * a warning exactly when the file ended in a torn line, and a repair that sticks.
 */
async function checkHistory(dataDir: string): Promise<{ turns: number; torn: boolean }> {
  const raw = await readFile(sessionPaths(dataDir, "u1", "s1").history).catch(() => Buffer.alloc(0));
  const torn = raw.length > 0 && raw[raw.length - 1] !== 0x0a;
  const store = new FileSessionStore(dataDir);
  const loaded = await store.loadHistory("u1", "s1");
  assert.equal(loaded.warnings.length, torn ? 1 : 0, loaded.warnings.join("; "));
  if (torn) assert.match(loaded.warnings[0] ?? "", /torn last line/);
  assert.equal(loaded.messages.length % 2, 0);
  const turns = loaded.messages.length / 2;
  for (let n = 0; n < turns; n += 1) assert.deepEqual(loaded.messages.slice(2 * n, 2 * n + 2), expectedTurn(n).messages, `turn ${n}`);
  assert.equal(turns, raw.toString("utf8").split("\n").length - 1, "every complete line survives");
  assert.deepEqual(await store.loadHistory("u1", "s1"), { messages: loaded.messages, warnings: [] });
  return { turns, torn };
}

describe("history after a kill mid-write", () => {
  it(`loads only whole turns, warning iff a line was torn (${RUNS} SIGKILLs at random moments)`, async (t) => {
    let tornRuns = 0;
    for (let run = 0; run < RUNS; run += 1) {
      const dataDir = await tempDataDir();
      try {
        const child = spawn(process.execPath, [APPENDER, dataDir, "u1", "s1"], { stdio: ["ignore", "pipe", "ignore"] });
        const exited = exitOf(child);
        await readyOf(child);
        await delay(50 + Math.floor(Math.random() * 300));
        child.kill("SIGKILL");
        assert.equal((await exited).signal, "SIGKILL");
        const { turns, torn } = await checkHistory(dataDir);
        if (torn) tornRuns += 1;
        t.diagnostic(`run ${run}: ${turns} whole turns, torn=${torn}`);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
    t.diagnostic(`${tornRuns} of ${RUNS} kills tore a line`);
  });

  it("a write that fails mid-line (file size limit) is rolled back before the process dies", { skip: process.platform === "win32" }, async (t) => {
    const dataDir = await tempDataDir();
    try {
      // RLIMIT_FSIZE makes the kernel cut a write short at a byte limit (Node then gets EFBIG).
      const limitKiB = 500 + Math.floor(Math.random() * 1500);
      const script = 'ulimit -f "$1" && exec "$2" "$3" "$4" u1 s1';
      const child = spawn("bash", ["-c", script, "bash", String(limitKiB), process.execPath, APPENDER, dataDir], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const exit = await exitOf(child);
      assert.notEqual(exit.code, 0);
      assert.match(stderr, /EFBIG/);
      const { turns, torn } = await checkHistory(dataDir);
      assert.equal(torn, false, "the partial line was truncated away");
      assert.ok(turns > 0);
      t.diagnostic(`limit ${limitKiB} KiB: ${turns} whole turns kept`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
