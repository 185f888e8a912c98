// Platform defaults with an injected platform: Windows env names without case, PATHEXT on
// configured binaries, the macOS PATH of a Finder-started app, DYLD_LIBRARY_PATH through the
// watchdog's /bin/sh (run for real: SIP's stripping simulated by leaving the variable out).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { allowListedEnv } from "../../src/shared/process/child-env.js";
import { findExecutable, windowsExtensions } from "../../src/shared/process/find-executable.js";
import { DYLD_CARRIER, watchdogEnv, withParentWatchdog } from "../../src/shared/process/parent-watchdog.js";
import { readLoginShellPath } from "../../src/shared/login-shell-path.js";
import { completeDarwinPath, envValue } from "../../src/shared/platform-env.js";

test("env names: without case on win32, exact elsewhere", () => {
  const env = { Path: "C:\\Windows", SystemRoot: "C:\\Windows", OPENAI_API_KEY: "secret" };
  assert.equal(envValue(env, "PATH", "win32"), "C:\\Windows");
  assert.equal(envValue(env, "PATH", "linux"), undefined);
  assert.deepEqual(allowListedEnv(env, [], "win32"), { Path: "C:\\Windows", SystemRoot: "C:\\Windows" });
  assert.deepEqual(allowListedEnv(env, [], "linux"), {});
  assert.deepEqual(allowListedEnv({ Cuda_Visible_Devices: "0" }, [{ names: [], prefixes: ["CUDA_"] }], "win32"), { Cuda_Visible_Devices: "0" });
});

test("PATHEXT: a configured binary without its extension is found on win32; one with it is taken as is", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "local-ai-pathext-"));
  const exe = path.join(dir, "llama-server.EXE");
  await writeFile(exe, "");
  await chmod(exe, 0o755);
  assert.deepEqual(await findExecutable(path.join(dir, "llama-server"), { PATHEXT: ".COM;.EXE" }, "win32"), { found: true, path: exe });
  assert.deepEqual(await findExecutable("llama-server", { Path: dir, pathext: ".EXE" }, "win32"), { found: true, path: exe });
  assert.equal((await findExecutable(path.join(dir, "llama-server"), { PATHEXT: ".EXE" }, "linux")).found, false);
  assert.deepEqual(windowsExtensions("llama-server.exe", ".COM;.EXE"), [""]);
  assert.deepEqual(windowsExtensions("npx", undefined), ["", ".COM", ".EXE", ".BAT", ".CMD"]);
});

const noPath: Record<string, string> = {};

test("macOS PATH: launchd's bare one (or none) gets Homebrew's folders; a terminal's is kept; other platforms untouched", () => {
  assert.equal(completeDarwinPath({ PATH: "/usr/bin:/bin:/usr/sbin:/sbin" }, "darwin").PATH, "/usr/bin:/bin:/usr/sbin:/sbin:/opt/homebrew/bin:/usr/local/bin");
  assert.equal(completeDarwinPath(noPath, "darwin").PATH, "/usr/bin:/bin:/usr/sbin:/sbin:/opt/homebrew/bin:/usr/local/bin");
  const terminal = { PATH: "/Users/ada/.nvm/versions/node/v20/bin:/usr/bin:/bin" };
  assert.equal(completeDarwinPath(terminal, "darwin"), terminal);
  const bare = { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" };
  assert.equal(completeDarwinPath(bare, "linux"), bare);
});

test("macOS PATH: the login shell's folders first, asked only for launchd's bare PATH", () => {
  let asked = 0;
  const login = (): string => (asked++, "/Users/ada/.nvm/versions/node/v20/bin:/opt/homebrew/bin:/usr/bin:/bin");
  assert.equal(completeDarwinPath({ PATH: "/usr/bin:/bin:/usr/sbin:/sbin" }, "darwin", login).PATH, "/Users/ada/.nvm/versions/node/v20/bin:/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin");
  assert.equal(asked, 1);
  completeDarwinPath({ PATH: "/usr/local/bin:/usr/bin" }, "darwin", login);
  completeDarwinPath({ PATH: "/usr/bin:/bin:/usr/sbin:/sbin" }, "linux", login);
  assert.equal(asked, 1, "never asked for a PATH the user chose, nor off macOS");
});

test("the login shell's PATH is read between marks, whatever the profile prints; a missing shell gives null", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "local-ai-shell-"));
  const shell = path.join(dir, "noisy-sh");
  // A shell whose profile prints a banner first: only the marked part counts.
  await writeFile(shell, `#!/bin/sh\necho "Welcome back"\nPATH=/from/profile:/usr/bin\nshift\neval "$1"\n`);
  await chmod(shell, 0o755);
  assert.equal(readLoginShellPath(shell), "/from/profile:/usr/bin");
  assert.equal(readLoginShellPath(path.join(dir, "no-such-shell")), null);
});

test("DYLD_LIBRARY_PATH reaches the program through the watchdog's sh even when sh's own copy is stripped", async () => {
  const command = withParentWatchdog(process.execPath, ["-e", "process.stdout.write(JSON.stringify([process.env.DYLD_LIBRARY_PATH ?? null, process.env.LOCAL_AI_DYLD_LIBRARY_PATH ?? null]))"]);
  assert.equal(command.watched, true);
  const env = watchdogEnv({ PATH: process.env.PATH ?? "", DYLD_LIBRARY_PATH: "/Applications/My App.app/lib" }, command);
  assert.equal(env[DYLD_CARRIER], "/Applications/My App.app/lib");
  // What SIP does to /bin/sh on macOS: DYLD_* never reaches it.
  delete env.DYLD_LIBRARY_PATH;
  // Spawned as ServerProcess does: its own group, stdin a pipe we hold (the watchdog's lifeline).
  const child = spawn(command.file, command.args, { env, detached: true, stdio: ["pipe", "pipe", "inherit"] });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  await once(child.stdout, "close");
  child.stdin.end();
  assert.deepEqual(JSON.parse(stdout), ["/Applications/My App.app/lib", null]);
  // Unwatched (Windows): the env as it is.
  assert.deepEqual(watchdogEnv({ DYLD_LIBRARY_PATH: "x" }, { file: "x", args: [], watched: false }), { DYLD_LIBRARY_PATH: "x" });
});
