import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";

const PROBE = new URL("../helpers/signal-probe.js", import.meta.url).href;

/** The CLI with the probe that announces its first SIGTERM listener on stderr. */
function probed(args: string[], cwd: string, env: Record<string, string> = {}): CliProcess {
  return new CliProcess(args, { cwd, env: { NODE_OPTIONS: `--import=${PROBE}`, ...env } });
}

/** Resolves when the CLI first listens for SIGTERM: the earliest moment it can handle one. */
async function firstListener(proc: CliProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (proc.stderr.includes("@@sigterm-listener@@")) {
        proc.child.stderr.off("data", check);
        resolve();
      }
    };
    proc.child.stderr.on("data", check);
    proc.child.once("exit", () => reject(new Error(`exited before listening: ${proc.stderr}`)));
    check();
  });
}

describe("signals from the first instant (built CLI)", () => {
  it("serve-stdio: a SIGTERM while it is still starting up is a clean shutdown (exit 0, stdout untouched)", async () => {
    const { dir, configPath } = await tempConfig();
    const proc = probed(["serve-stdio", "--config", configPath], dir, { LOCAL_AI_LOG_LEVEL: "info" });
    await firstListener(proc);
    proc.kill("SIGTERM");
    const { code, signal } = await proc.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, proc.stderr);
    assert.equal(proc.stdout, "");
    assert.match(proc.stderr, /signal received; shutting down/);
  });

  it("serve-stdio --protocol acp: the same (the ACP front door shares the stdio start-up)", async () => {
    const { dir, configPath } = await tempConfig();
    const proc = probed(["serve-stdio", "--protocol", "acp", "--config", configPath], dir);
    await firstListener(proc);
    proc.kill("SIGTERM");
    const { code, signal } = await proc.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, proc.stderr);
    assert.equal(proc.stdout, "");
  });

  it("serve-http: the same", async () => {
    // A model file that does not exist yet is fine: serve-http loads models on first use.
    const { dir, configPath } = await tempConfig("llama:\n  models:\n    default:\n      path: ./absent.gguf\nagents:\n  assistant: {}\n");
    const proc = probed(["serve-http", "--config", configPath, "--port", "0"], dir);
    await firstListener(proc);
    proc.kill("SIGTERM");
    const { code, signal } = await proc.exited;
    assert.equal(signal, null, proc.stderr);
    assert.equal(code, 0, proc.stderr);
  });

  it("doctor (no signal handling of its own): a held SIGTERM still ends it the default way", async () => {
    const { dir, configPath } = await tempConfig();
    const proc = probed(["doctor", "--config", configPath], dir);
    await firstListener(proc);
    proc.kill("SIGTERM");
    const { signal } = await proc.exited;
    assert.equal(signal, "SIGTERM");
  });
});
