import assert from "node:assert/strict";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";

/**
 * The Pod front door takes its ids from the command line and from its state file: a hostile one
 * (from a flag, or written into pods/<name>.json) stops the pod before it listens, naming the
 * id, and no path is made from it.
 */
const YAML = "llama:\n  models:\n    default:\n      path: /unused.gguf\nagents:\n  assistant:\n    model: default\n";

async function refused(args: string[], prepare?: (dir: string) => Promise<void>): Promise<{ stderr: string; dir: string }> {
  const { dir, configPath } = await tempConfig(YAML);
  await prepare?.(dir);
  const proc = new CliProcess(["serve-socket", "--config", configPath, "--socket", path.join(dir, "pod.sock"), ...args], { cwd: dir });
  const { code } = await proc.exited;
  assert.notEqual(code, 0, proc.stderr);
  assert.equal(proc.stdout, "");
  const entries = await readdir(dir);
  assert.ok(!entries.includes("pod.sock"), "the pod never listened");
  return { stderr: proc.stderr, dir };
}

describe("serve-socket refuses hostile ids", () => {
  for (const [flag, value, kind] of [
    ["--name", "../x", "pod name"],
    ["--name", ".hidden", "pod name"],
    ["--name", "a/b", "pod name"],
    ["--session", "../../etc", "session_id"],
    ["--session", "x".repeat(65), "session_id"],
  ] as const) {
    it(`${flag} ${JSON.stringify(value.slice(0, 12))}`, async () => {
      const { stderr, dir } = await refused([flag, value]);
      assert.match(stderr, new RegExp(`${kind} ".*" is not allowed`));
      assert.deepEqual(await readdir(path.join(dir, "data")).catch(() => []), [], "nothing written under data_dir");
    });
  }

  it("a session id written into the pod's state file", async () => {
    const { stderr, dir } = await refused([], async (root) => {
      await mkdir(path.join(root, "data", "pods"), { recursive: true });
      await writeFile(path.join(root, "data", "pods", "assistant.json"), JSON.stringify({ session_id: "../../evil", pod_name: "assistant" }));
    });
    assert.match(stderr, /session_id "\.\.\/\.\.\/evil" is not allowed/);
    assert.deepEqual(await readdir(path.join(dir, "data")), ["pods"], "no sessions folder");
  });
});
