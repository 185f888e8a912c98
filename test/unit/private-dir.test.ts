import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pidFilePath, writePidFile } from "../../src/engine/llama-server/pid-file.js";
import { ensurePrivateDir, tightenTree } from "../../src/shared/private-dir.js";

const skip = process.platform === "win32" ? "POSIX modes" : false;
const modeOf = async (file: string): Promise<string> => ((await stat(file)).mode & 0o777).toString(8);

describe("private folders under data_dir", { skip }, () => {
  it("ensurePrivateDir creates 0700 folders and tightens open ones from the root down, never above the root", async () => {
    const base = await mkdtemp(path.join(tmpdir(), "local-ai-private-"));
    await chmod(base, 0o755);
    const root = path.join(base, "data");
    await mkdir(path.join(root, "sessions"), { recursive: true });
    await chmod(root, 0o755);
    await chmod(path.join(root, "sessions"), 0o750);
    const first = await ensurePrivateDir(path.join(root, "sessions", "u", "s"), root);
    assert.equal(first, path.join(root, "sessions", "u"));
    for (const dir of [root, path.join(root, "sessions"), path.join(root, "sessions", "u"), path.join(root, "sessions", "u", "s")]) assert.equal(await modeOf(dir), "700", dir);
    assert.equal(await modeOf(base), "755", "the folder above data_dir is the user's");
    // A folder outside the root (a --socket elsewhere): created private, existing ones untouched.
    const elsewhere = path.join(base, "sockets");
    await mkdir(elsewhere, { mode: 0o755 });
    await chmod(elsewhere, 0o755);
    await ensurePrivateDir(path.join(elsewhere, "new"), root);
    assert.deepEqual([await modeOf(elsewhere), await modeOf(path.join(elsewhere, "new"))], ["755", "700"]);
  });

  it("tightenTree makes every folder 0700 and every file 0600; a llama-server pid file is private", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "local-ai-private-"));
    await mkdir(path.join(root, "models", "part"), { recursive: true, mode: 0o755 });
    await writeFile(path.join(root, "models", "part", "m.gguf"), "x", { mode: 0o644 });
    await chmod(path.join(root, "models"), 0o775);
    await tightenTree(path.join(root, "models"));
    assert.deepEqual(await Promise.all(["models", "models/part", "models/part/m.gguf"].map((p) => modeOf(path.join(root, p)))), ["700", "700", "600"]);

    const dataDir = path.join(root, "data");
    const pidFile = pidFilePath(dataDir, "default");
    await writePidFile(pidFile, { pid: process.pid, port: 1, binary: "/bin/llama-server", model: "/m.gguf", startedAt: new Date().toISOString() });
    assert.deepEqual([await modeOf(dataDir), await modeOf(path.dirname(pidFile)), await modeOf(pidFile)], ["700", "700", "600"]);
  });
});
