import type { Config } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, firstLine, ok, warn } from "../check-result.js";
import { findExecutable } from "../../shared/process/find-executable.js";

const ID = "llama_server.binary";
const TITLE = "llama-server binary";
export const VERSION_TIMEOUT_MS = 5000;
const INSTALL_FIX =
  "install llama.cpp's llama-server or set llama.binary to its path; `npm run build:llama-server` builds one from the bundled source";

/** Only what a dynamically linked llama-server needs to start; never our secrets. */
const ENV_ALLOW = ["PATH", "HOME", "USERPROFILE", "SystemRoot", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP", "LANG", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"];
const ENV_ALLOW_PREFIXES = ["CUDA_", "HIP_", "ROCR_", "GGML_", "VK_"];

export interface LlamaServerBinaryCheckOptions {
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
  versionTimeoutMs?: number;
}

/** Returns no result when no model uses llama-server: the binary is then irrelevant. */
export async function checkLlamaServerBinary(config: Config, options: LlamaServerBinaryCheckOptions): Promise<CheckResult[]> {
  const users = Object.entries(config.llama.models)
    .filter(([, model]) => driverOf(model).doctorChecks.includes("llama_server_binary"))
    .map(([name]) => name);
  if (users.length === 0) return [];
  const data: Record<string, unknown> = { binary: config.llama.binary, models: users };
  const lookup = await findExecutable(config.llama.binary, options.env);
  if (!lookup.found) {
    return [fail(ID, TITLE, `llama.binary: ${lookup.reason}`, INSTALL_FIX, data)];
  }
  return [await runVersion(lookup.path, { ...data, path: lookup.path }, options)];
}

async function runVersion(file: string, data: Record<string, unknown>, options: LlamaServerBinaryCheckOptions): Promise<CheckResult> {
  const timeoutMs = options.versionTimeoutMs ?? VERSION_TIMEOUT_MS;
  // execa (and its dependency tree) is imported on the first spawn only: it is off every start-up path.
  const { execa } = await import("execa");
  const subprocess = execa(file, ["--version"], {
    reject: false,
    // Output is captured, never inherited: in stdio mode our stdout carries the protocol.
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    all: true,
    maxBuffer: 256 * 1024,
    extendEnv: false,
    env: allowedEnv(options.env),
    windowsHide: true,
    // Its own process group, so a wrapper script's children die with it: a grandchild that keeps
    // our pipes open would otherwise keep this promise (and the doctor process) alive.
    detached: process.platform !== "win32",
  });
  let timedOut = false;
  const killGroup = (): void => {
    // SIGKILL at once: a --version probe has no state worth a graceful stop.
    const pid = subprocess.pid;
    try {
      if (pid !== undefined && process.platform !== "win32") process.kill(-pid, "SIGKILL");
      else subprocess.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, timeoutMs);
  timer.unref();
  options.signal?.addEventListener("abort", killGroup, { once: true });
  if (options.signal?.aborted === true) killGroup();
  let result: Awaited<typeof subprocess>;
  try {
    result = await subprocess;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", killGroup);
  }
  const output = typeof result.all === "string" ? result.all : "";
  const versionLine = output.split(/\r?\n/).map((line) => line.trim()).find((line) => /^version:\s*\S/.test(line));
  if (timedOut) {
    return fail(ID, TITLE, `${file} --version did not finish within ${timeoutMs / 1000} s`, `check that ${file} is llama.cpp's llama-server and runs on this machine; rebuild it with \`npm run build:llama-server\``, data);
  }
  if (result.failed && result.exitCode === undefined) {
    // Never started or killed by a signal (missing shared library loader, wrong architecture, crash).
    const why = typeof result.code === "string" ? result.code : result.signal !== undefined ? `killed by ${result.signal}` : firstLine(typeof result.shortMessage === "string" ? result.shortMessage : "failed");
    return fail(ID, TITLE, `${file} cannot run: ${why}`, `${file} does not run on this machine (wrong architecture or a crash); ${INSTALL_FIX}`, data);
  }
  if (result.exitCode !== 0) {
    const detail = firstLine(output) || `exit code ${result.exitCode}`;
    return fail(ID, TITLE, `${file} --version failed: ${detail}`, `fix what the message says (often a missing shared library: set LD_LIBRARY_PATH), or ${INSTALL_FIX}`, { ...data, exit_code: result.exitCode });
  }
  if (versionLine === undefined) {
    return warn(ID, TITLE, `${file} ran, but printed no "version:" line; it may not be llama-server`, "set llama.binary to llama.cpp's llama-server", data);
  }
  return ok(ID, TITLE, `${file}: ${versionLine}`, { ...data, version: versionLine.replace(/^version:\s*/, "") });
}

function allowedEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (ENV_ALLOW.includes(key) || ENV_ALLOW_PREFIXES.some((prefix) => key.startsWith(prefix))) picked[key] = value;
  }
  return picked;
}
