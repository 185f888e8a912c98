// Which flags a llama-server build supports, read from its own `--help` once per binary
// (keyed by path, mtime and size, so a rebuilt binary is probed again). One instance per
// runtime, made by the composition root and shared by the engines and plan.
import { stat } from "node:fs/promises";
import type { Logger } from "../../logging/create-logger.js";
import { childEnv } from "./child-env.js";
import { BASELINE_SUPPORTED_FLAGS, parseHelpFlags } from "./server-args.js";

const HELP_TIMEOUT_MS = 15_000;

export class HelpProbe {
  private readonly cache = new Map<string, Promise<ReadonlySet<string>>>();

  async supportedFlags(binary: string, logger?: Logger): Promise<ReadonlySet<string>> {
    const stats = await stat(binary);
    const key = `${binary}\0${stats.mtimeMs}\0${stats.size}`;
    let pending = this.cache.get(key);
    if (pending === undefined) {
      pending = runProbe(binary, logger);
      this.cache.set(key, pending);
    }
    const flags = await pending;
    // A failed probe (timeout, crash) may be transient: do not keep its fallback answer.
    if (flags === BASELINE_SUPPORTED_FLAGS) this.cache.delete(key);
    return flags;
  }
}

async function runProbe(binary: string, logger?: Logger): Promise<ReadonlySet<string>> {
  // execa (and its dependency tree) is imported on the first spawn only: it is off every start-up path.
  const { execa } = await import("execa");
  const result = await execa(binary, ["--help"], {
    reject: false,
    all: true,
    stdin: "ignore",
    env: childEnv(),
    extendEnv: false,
    timeout: HELP_TIMEOUT_MS,
  });
  const flags = parseHelpFlags(result.all ?? "");
  // Every llama-server build lists --port; without it the output is not a usage text.
  if (!flags.has("--port")) {
    logger?.warn(
      { binary, exitCode: result.exitCode, timedOut: result.timedOut, output: (result.all ?? "").slice(-500) },
      "could not read the flags of llama-server from --help; assuming the baseline set",
    );
    return BASELINE_SUPPORTED_FLAGS;
  }
  logger?.debug({ binary, flags: flags.size }, "llama-server flags probed");
  return flags;
}
