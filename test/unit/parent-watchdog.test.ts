// The parent watchdog (src/shared/process/parent-watchdog.ts) with real processes: the program
// keeps the spawn's pid, exit code and signal; it and its watchdog die with a SIGKILLed parent;
// a program that exits on its own takes its watchdog along. And the app's exit hook.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { readlink, realpath } from "node:fs/promises";
import { createInterface } from "node:readline";
import { after, describe, test } from "node:test";
import { killChildrenOnExit } from "../../src/app/runtime/child-exit-hook.js";
import { ChildRegistry } from "../../src/shared/process/child-registry.js";
import { isProcessAlive } from "../../src/shared/process/is-process-alive.js";
import { withParentWatchdog } from "../../src/shared/process/parent-watchdog.js";
import { waitForProcessExit } from "../../src/shared/process/wait-for-exit.js";
import { watchdogsOf } from "../helpers/llama-server-procs.js";

const LINUX = process.platform === "linux";
/** A program that says "ready" once it runs (after the exec), then idles until killed. */
const IDLE_PROGRAM = ["-e", "process.stdout.write('ready\\n'); setInterval(() => {}, 60_000)"];
/** Generous bounds that only catch a hang: the kills themselves take milliseconds. */
const GONE_WITHIN_MS = 10_000;

const started: number[] = [];
after(() => {
  for (const pid of started) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone, as it should be
    }
  }
});

function spawnWatched(args: readonly string[]): ChildProcess {
  const command = withParentWatchdog(process.execPath, args);
  const child = spawn(command.file, command.args, { detached: true, stdio: ["pipe", "pipe", "inherit"] });
  if (child.pid !== undefined) started.push(child.pid);
  return child;
}

async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, "line")) as [string];
  lines.close();
  return line;
}

describe("parent watchdog", { skip: process.platform === "win32" ? "no sh on Windows: the command runs as is" : false }, () => {
  test("the program runs in the spawn's own pid (the exec), with its watchdog beside it in the group", { skip: !LINUX && "reads /proc" }, async () => {
    const child = spawnWatched(IDLE_PROGRAM);
    assert.equal(await firstLine(child), "ready");
    const pid = child.pid!;
    assert.equal(await readlink(`/proc/${pid}/exe`), await realpath(process.execPath), "the pid is the program's, not a shell's");
    const watchdogs = await watchdogsOf(pid);
    assert.equal(watchdogs.length, 1, `one watchdog: ${watchdogs.join(", ")}`);
    const exit = once(child, "exit");
    process.kill(pid, "SIGKILL");
    assert.deepEqual(await exit, [null, "SIGKILL"], "the parent sees the program's own signal");
    assert.ok(await waitForProcessExit(watchdogs[0]!, GONE_WITHIN_MS), "node closed the pipe at the exit: the watchdog ended");
  });

  test("the parent sees the program's own exit code, and the program has /dev/null on stdin", async () => {
    const child = spawnWatched(["-e", "let n = 0; process.stdin.on('data', (b) => (n += b.length)).on('end', () => process.exit(n === 0 ? 7 : 1))"]);
    const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
    assert.deepEqual([code, signal], [7, null]);
  });

  test("a SIGKILLed parent takes the program and its watchdog with it", { skip: !LINUX && "reads /proc" }, async () => {
    const moduleUrl = new URL("../../src/shared/process/parent-watchdog.js", import.meta.url).href;
    // The parent: starts the watched program the way ServerProcess does, reports its pid, idles.
    const parentScript = [
      `import { spawn } from "node:child_process";`,
      `const { withParentWatchdog } = await import(${JSON.stringify(moduleUrl)});`,
      `const command = withParentWatchdog(process.execPath, ${JSON.stringify(IDLE_PROGRAM)});`,
      `const child = spawn(command.file, command.args, { detached: true, stdio: ["pipe", "pipe", "ignore"] });`,
      `child.stdout.once("data", () => process.stdout.write(child.pid + "\\n"));`,
      `setInterval(() => {}, 60_000);`,
    ].join("\n");
    const parent = spawn(process.execPath, ["--input-type=module", "-e", parentScript], { stdio: ["ignore", "pipe", "inherit"] });
    const pid = Number(await firstLine(parent));
    started.push(pid);
    assert.ok(isProcessAlive(pid));
    const watchdogs = await watchdogsOf(pid);
    assert.equal(watchdogs.length, 1);
    const parentExit = once(parent, "exit");
    parent.kill("SIGKILL");
    await parentExit;
    assert.ok(await waitForProcessExit(pid, GONE_WITHIN_MS), "the program died with its parent");
    assert.ok(await waitForProcessExit(watchdogs[0]!, GONE_WITHIN_MS), "and so did the watchdog");
  });

  test("Windows gets the command as is", () => {
    assert.deepEqual(withParentWatchdog("server.exe", ["--port", "1"], "win32"), { file: "server.exe", args: ["--port", "1"], watched: false });
  });
});

describe("child registry and the app's exit hook", () => {
  test("the hook kills every registered group at exit, and is gone once removed", async () => {
    const registry = new ChildRegistry();
    const fakeProcess = new EventEmitter();
    const remove = killChildrenOnExit(registry, fakeProcess as unknown as NodeJS.Process);
    const child = spawn(process.execPath, IDLE_PROGRAM, { detached: true, stdio: ["ignore", "pipe", "inherit"] });
    started.push(child.pid!);
    assert.equal(await firstLine(child), "ready");
    registry.add(child.pid!);
    assert.equal(registry.size, 1);
    const exit = once(child, "exit");
    fakeProcess.emit("exit", 0);
    assert.deepEqual(await exit, [null, "SIGKILL"]);
    assert.equal(registry.size, 0);
    remove();
    assert.equal(fakeProcess.listenerCount("exit"), 0);
  });
});
