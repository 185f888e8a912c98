import type { Config } from "../config/schema.js";
import { fail } from "./check-result.js";
import { checkConfig } from "./checks/config.js";
import { checkDataDir } from "./checks/data-dir.js";
import { checkLlamaServerBinary } from "./checks/llama-server-binary.js";
import { checkModels } from "./checks/models.js";
import { checkPorts } from "./checks/ports.js";
import { checkSystem } from "./checks/system.js";
import type { CheckResult, CheckStatus, DoctorContext, DoctorReport } from "./doctor-report.js";

/**
 * The outer bound of any single check. Checks bound their own waits (2 s HTTP, 5 s --version);
 * this catches whatever they miss — a hung NFS mount, a child that keeps its pipes open — so a
 * doctor run always finishes.
 */
export const CHECK_TIMEOUT_MS = 10_000;

interface PlannedCheck {
  /** Used for the result when the check throws or times out instead of answering. */
  id: string;
  title: string;
  /** What is likely stuck when the check times out, for the fix line. */
  stuck: string;
  run(signal: AbortSignal): Promise<CheckResult | CheckResult[]>;
}

export interface RunDoctorOptions {
  checkTimeoutMs?: number;
}

/** Runs every check concurrently; the report keeps a stable order (system, config, files, binary, ports). */
export async function runDoctor(context: DoctorContext, options: RunDoctorOptions = {}): Promise<DoctorReport> {
  const timeoutMs = options.checkTimeoutMs ?? CHECK_TIMEOUT_MS;
  const results = await Promise.all(planChecks(context).map((check) => runBounded(check, timeoutMs, context.signal)));
  context.signal?.throwIfAborted();
  const checks = results.flat();
  const summary: Record<CheckStatus, number> = { ok: 0, warn: 0, fail: 0 };
  for (const check of checks) summary[check.status] += 1;
  return { ok: summary.fail === 0, summary, checks, version: context.version, generated_at: new Date().toISOString() };
}

function planChecks(context: DoctorContext): PlannedCheck[] {
  const { configState, env } = context;
  const planned: PlannedCheck[] = [
    { id: "system", title: "System", stuck: "the operating system did not answer a basic query", run: () => checkSystem() },
    { id: "config", title: "Config", stuck: "nothing expected (this check does no I/O; please report it)", run: () => checkConfig(configState) },
  ];
  // Without a valid config there is nothing to check the files and ports against; the config
  // check already says why, and guessing defaults would report on a setup the user does not have.
  if (configState.status !== "loaded") return planned;
  const config: Config = configState.config;
  return [
    ...planned,
    { id: "data_dir", title: "Data directory", stuck: "the disk holding app.data_dir does not answer (a hung network mount?)", run: () => checkDataDir(config.app.data_dir) },
    { id: "models", title: "Models", stuck: "a model file's disk or an openai base_url does not answer", run: (signal) => checkModels(config, { signal }) },
    { id: "llama_server.binary", title: "llama-server binary", stuck: "llama.binary hangs when run with --version", run: (signal) => checkLlamaServerBinary(config, { env, signal }) },
    { id: "ports", title: "Ports", stuck: "the network stack did not answer a listen", run: () => checkPorts(config) },
  ];
}

async function runBounded(check: PlannedCheck, timeoutMs: number, outer: AbortSignal | undefined): Promise<CheckResult[]> {
  const controller = new AbortController();
  const onOuterAbort = (): void => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult[]>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`check ${check.id} timed out`));
      resolve([
        fail(check.id, check.title, `the check did not finish within ${timeoutMs / 1000} s`, `likely cause: ${check.stuck}; fix that and run \`local-ai doctor\` again`),
      ]);
    }, timeoutMs);
    timer.unref();
  });
  const running = (async (): Promise<CheckResult[]> => {
    try {
      const result = await check.run(controller.signal);
      return Array.isArray(result) ? result : [result];
    } catch (error) {
      // A check that throws is a bug in the check, but the user still gets a report.
      const message = error instanceof Error ? error.message : String(error);
      return [fail(check.id, check.title, `the check itself failed: ${message}`, "report this as a bug in local-ai doctor, with the message above")];
    }
  })();
  try {
    return await Promise.race([running, timedOut]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
  }
}
