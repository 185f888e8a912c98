// The process layer (src/shared/process) for each platform, with an injected platform and a fake
// command runner: the commands built on darwin and win32, and `ps -ww` / CIM output with
// spaces in paths parsed right. The real POSIX path runs end to end in the llama-server and
// no-orphan suites.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isRecordedServer, type PidRecord } from "../../src/engine/llama-server/pid-file.js";
import { closeSession, type McpSession } from "../../src/tools/mcp/mcp-session.js";
import { ChildRegistry } from "../../src/shared/process/child-registry.js";
import { killTree } from "../../src/shared/process/kill-tree.js";
import { withParentWatchdog } from "../../src/shared/process/parent-watchdog.js";
import { parseCimOutput, parsePsOutput, readProcessInfo } from "../../src/shared/process/process-info.js";
import { supervisedDetached } from "../../src/shared/process/process-platform.js";
import { splitWindowsCommandLine } from "../../src/shared/process/windows-command-line.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { fakePlatform } from "../helpers/fake-command-runner.js";

const MAC_BINARY = "/Applications/My App.app/Contents/Resources/bin/llama-server";
/** The output of `ps -ww -o lstart= -o command= -p 4242` on macOS (C locale), written in its documented format (not captured on a Mac). */
const PS_OUTPUT = `Tue Dec  1 15:56:43 2026     ${MAC_BINARY} --host 127.0.0.1 --port 8081 -m /Users/ada/Library/Application Support/local-ai/models/qwen.gguf -t 8\n`;
/** The CIM query's output (PowerShell `ConvertTo-Json -Compress`: CRLF-terminated), written in its documented format (not captured on Windows). */
const CIM_OUTPUT = String.raw`{"CommandLine":"\"C:\\Program Files\\My App\\resources\\llama-server.exe\" --host 127.0.0.1 --port 8081 -m \"C:\\Users\\Ada Lovelace\\AppData\\Roaming\\My App\\models\\qwen.gguf\" -t 8","Start":"2026-12-01T15:56:43.1234567Z"}` + "\r\n";

const record = (binary: string): PidRecord => ({ pid: 4242, port: 8081, binary, model: "qwen", startedAt: "2026-12-01T15:56:43.500Z" });

describe("darwin: ps -ww", () => {
  test("the command built, and a command line with spaces in the binary and model paths read back", async () => {
    const { platform, commands } = fakePlatform("darwin", () => ({ exitCode: 0, stdout: PS_OUTPUT }));
    const info = await readProcessInfo(4242, platform, { executable: MAC_BINARY });
    assert.deepEqual(commands, [{ file: "ps", args: ["-ww", "-o", "lstart=", "-o", "command=", "-p", "4242"], sync: false }]);
    assert.ok(info !== null);
    assert.equal(info.argv[0], MAC_BINARY);
    assert.deepEqual(info.argv.slice(1, 5), ["--host", "127.0.0.1", "--port", "8081"]);
    assert.equal(info.startedAt, new Date(2026, 11, 1, 15, 56, 43).getTime());
    assert.equal(isRecordedServer(record(MAC_BINARY), info.argv), true);
    assert.equal(isRecordedServer({ ...record(MAC_BINARY), port: 8082 }, info.argv), false);
  });

  test("without the expected binary the line is split on spaces: a path with a space is never taken for it", () => {
    const info = parsePsOutput(PS_OUTPUT);
    assert.ok(info !== null);
    assert.equal(info.argv[0], "/Applications/My");
    assert.equal(isRecordedServer(record("/opt/other/llama-server"), info.argv), false);
  });

  test("a gone process (ps exits 1, prints nothing) and garbage give null", async () => {
    const gone = fakePlatform("darwin", () => ({ exitCode: 1, stdout: "" }));
    assert.equal(await readProcessInfo(4242, gone.platform), null);
    assert.equal(parsePsOutput(""), null);
    assert.equal(parsePsOutput("not a ps line"), null);
  });
});

describe("win32: CIM and taskkill", () => {
  test("the PowerShell CIM query built, and its JSON with spaces in paths read back exactly", async () => {
    const { platform, commands } = fakePlatform("win32", () => ({ exitCode: 0, stdout: CIM_OUTPUT }));
    const info = await readProcessInfo(4242, platform);
    assert.equal(commands.length, 1);
    assert.equal(commands[0]?.file, "powershell.exe");
    assert.deepEqual(commands[0]?.args.slice(0, 4), ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]);
    assert.match(commands[0]?.args[4] ?? "", /Get-CimInstance -ClassName Win32_Process -Filter 'ProcessId=4242'/);
    assert.ok(info !== null);
    assert.deepEqual(info.argv, [
      "C:\\Program Files\\My App\\resources\\llama-server.exe", "--host", "127.0.0.1", "--port", "8081",
      "-m", "C:\\Users\\Ada Lovelace\\AppData\\Roaming\\My App\\models\\qwen.gguf", "-t", "8",
    ]);
    assert.equal(info.startedAt, Date.parse("2026-12-01T15:56:43.123Z"));
    assert.equal(isRecordedServer(record("C:\\Program Files\\My App\\resources\\llama-server.exe"), info.argv), true);
  });

  test("another user's process (CommandLine null) and a gone one (no output) cannot be proven", () => {
    assert.equal(parseCimOutput('{"CommandLine":null,"Start":"2026-12-01T15:56:43Z"}'), null);
    assert.equal(parseCimOutput(""), null);
  });

  test("Windows command lines split as the C runtime does", () => {
    assert.deepEqual(splitWindowsCommandLine(String.raw`"C:\a b\x.exe" "a\"b" c\\"d e" f\\\\g "" h`), ["C:\\a b\\x.exe", 'a"b', "c\\d e", "f\\\\\\\\g", "", "h"]);
    assert.deepEqual(splitWindowsCommandLine(String.raw`C:\x.exe  "ends with slash\\"`), ["C:\\x.exe", "ends with slash\\"]);
  });

  test("a tree is killed with taskkill /T /F, asynchronously and from an exit hook", async () => {
    const { platform, commands } = fakePlatform("win32");
    assert.equal(await killTree(4242, "SIGTERM", platform), true);
    const registry = new ChildRegistry(platform);
    registry.add(77);
    registry.killAll();
    assert.deepEqual(commands, [
      { file: "taskkill", args: ["/PID", "4242", "/T", "/F"], sync: false },
      { file: "taskkill", args: ["/PID", "77", "/T", "/F"], sync: true },
    ]);
    assert.equal(registry.size, 0);
  });

  test("llama-server is spawned non-detached and without the sh watchdog (the job object ends it with us)", () => {
    const { platform } = fakePlatform("win32");
    assert.equal(supervisedDetached(platform), false);
    assert.deepEqual(withParentWatchdog("C:\\llama\\llama-server.exe", ["--port", "1"], platform.os), { file: "C:\\llama\\llama-server.exe", args: ["--port", "1"], watched: false });
    assert.equal(supervisedDetached(fakePlatform("darwin").platform), true);
  });

  test("an MCP server is ended as a tree (taskkill before the SDK's close), so npx's node.exe goes too", async () => {
    const events: string[] = [];
    const { platform, commands } = fakePlatform("win32", (command) => {
      events.push(command.file);
      return { exitCode: 0, stdout: "" };
    });
    // A pid that cannot be alive, so the wait after the close returns at once.
    const pid = 2 ** 30;
    const session = {
      client: { close: () => Promise.resolve(events.push("client.close")).then(() => undefined) },
      transport: { pid },
      stderr: null,
      pid,
      closed: false,
      disposed: false,
    } as unknown as McpSession;
    await closeSession(session, captureLogger().logger, platform);
    assert.deepEqual(commands.map((command) => [command.file, ...command.args]), [["taskkill", "/PID", String(pid), "/T", "/F"]]);
    assert.deepEqual(events, ["taskkill", "client.close"]);
  });

  test("on POSIX no helper command runs to close an MCP server (the SDK's sequence, as before)", async () => {
    const { platform, commands } = fakePlatform("linux");
    const session = { client: { close: () => Promise.resolve() }, transport: {}, stderr: null, pid: 2 ** 30, closed: false, disposed: false } as unknown as McpSession;
    await closeSession(session, captureLogger().logger, platform);
    assert.deepEqual(commands, []);
  });
});
