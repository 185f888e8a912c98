// data_dir is private: after a chat over stdio, a pull (stdio and `local-ai pull`) and a pod run
// through the built CLI, every folder under data_dir is 0700 and every file 0600 (sockets too),
// and a data_dir found 0755 is tightened (issue 27, item 6). Walks the real tree.
import assert from "node:assert/strict";
import { chmod, lstat, mkdir, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { fileSource, ModelFileServer } from "../helpers/model-file-server.js";
import { startPodIn } from "../helpers/pod-process.js";
import { PodSocketClient } from "../helpers/pod-socket-client.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";

const skip = process.platform === "win32" ? "POSIX modes" : false;
const PULL_TIMEOUT_MS = 120_000;

/** Every entry under `root` (and `root`) as `relative path: kind mode`. */
async function modes(root: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (current: string): Promise<void> => {
    const info = await lstat(current);
    const kind = info.isDirectory() ? "dir" : info.isFile() ? "file" : info.isSocket() ? "socket" : info.isSymbolicLink() ? "link" : "other";
    lines.push(`${path.relative(root, current) || "."}: ${kind} ${(info.mode & 0o777).toString(8)}`);
    if (info.isDirectory()) for (const entry of (await readdir(current)).sort()) await walk(path.join(current, entry));
  };
  await walk(root);
  return lines;
}

/** The entries whose mode is not 0700 (folders) / 0600 (anything else). */
function notPrivate(lines: string[]): string[] {
  return lines.filter((line) => !(line.endsWith(": dir 700") || / (file|socket) 600$/.test(line)));
}

/**
 * A data_dir made before, open to others (what earlier releases left), with `sessions/` open too
 * when the run will use it (folders are tightened as the runtime uses them; an unused one is out
 * of reach once data_dir is 0700).
 */
async function openDataDir(dir: string, sessions = true): Promise<string> {
  const dataDir = path.join(dir, "data");
  await mkdir(path.join(dataDir, sessions ? "sessions" : ""), { recursive: true });
  await chmod(dataDir, 0o755);
  if (sessions) await chmod(path.join(dataDir, "sessions"), 0o755);
  return dataDir;
}

describe("data_dir modes (built CLI)", { skip }, () => {
  let demoPath = "";
  let tinyUrl = "";
  let server: ModelFileServer;
  const dirs: string[] = [];

  before(async () => {
    demoPath = await ensureFixture("demo");
    const tiny = await ensureFixture("tiny");
    server = await ModelFileServer.start();
    tinyUrl = server.serve("/files/v1/tiny.gguf", fileSource(tiny, (await stat(tiny)).size));
  });
  after(async () => {
    await server.close();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("a chat over stdio: the session's folders and files (history, lock, KV state) are private; an open data_dir is tightened", async () => {
    const { dir, configPath } = await tempConfig(agentsYaml(demoPath));
    dirs.push(dir);
    const dataDir = await openDataDir(dir);
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const reply = await proc.request({ id: "c1", method: "chat", params: { session_id: "s1", input: "Hello!" } }, 60_000);
    assert.equal((reply.result as { response?: string } | undefined)?.response, DEMO_SENTENCE, JSON.stringify(reply));
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
    const tree = await modes(dataDir);
    assert.ok(tree.includes("sessions/default_user/s1/history.jsonl: file 600"), tree.join("\n"));
    assert.ok(tree.some((line) => line.startsWith("kv-cache/")), `the KV state was saved: ${tree.join("\n")}`);
    assert.deepEqual(notPrivate(tree), [], tree.join("\n"));
  });

  it("a pull (stdio `pull`, then `local-ai pull`) into the default models_dir: the folder and the model are private", async () => {
    const { dir, configPath } = await tempConfig(agentsYaml(demoPath));
    dirs.push(dir);
    const dataDir = await openDataDir(dir, false);
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { HF_HOME: dir } });
    const pulled = await proc.request({ id: "p1", method: "pull", params: { ref: tinyUrl } }, PULL_TIMEOUT_MS);
    assert.equal((pulled.result as { path?: string } | undefined)?.path, path.join(dataDir, "models", "tiny.gguf"), JSON.stringify(pulled));
    proc.endInput();
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(notPrivate(await modes(dataDir)), []);

    // The terminal's pull, into a models_dir that exists open (a download of an earlier release).
    await rm(path.join(dataDir, "models"), { recursive: true });
    await mkdir(path.join(dataDir, "models"));
    await chmod(path.join(dataDir, "models"), 0o755);
    const run = await runCli(["pull", "--config", configPath, tinyUrl], dir, { env: { HF_HOME: dir }, timeoutMs: PULL_TIMEOUT_MS });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), path.join(dataDir, "models", "tiny.gguf"));
    const tree = await modes(dataDir);
    assert.ok(tree.includes("models/tiny.gguf: file 600"), tree.join("\n"));
    assert.deepEqual(notPrivate(tree), [], tree.join("\n"));
  });

  it("a pod run: the pod's state file, its socket and the session are private", async () => {
    const { dir, configPath } = await tempConfig(agentsYaml(demoPath));
    dirs.push(dir);
    const dataDir = await openDataDir(dir);
    const pod = await startPodIn(dir, configPath);
    try {
      const client = await PodSocketClient.listening(pod.socketPath);
      const from = client.events.length;
      client.send("run", { input: "Hello!" });
      await client.waitFor((e) => e.event === "status" && e.data.state === "idle", { from });
      await client.close();
      const tree = await modes(dataDir);
      assert.ok(tree.includes("pod.sock: socket 600") && tree.includes("pods/assistant.json: file 600"), tree.join("\n"));
      assert.ok(tree.some((line) => /^sessions\/default_user\/[^/]+\/history\.jsonl: file 600$/.test(line)), tree.join("\n"));
      assert.deepEqual(notPrivate(tree), [], tree.join("\n"));
    } finally {
      pod.proc.kill("SIGTERM");
      await pod.proc.exited;
    }
  });
});
