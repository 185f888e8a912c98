import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import type { LlamaLoader } from "../engine/llama/llama-loader.js";
import type { HardwareSnapshot } from "../engine/plan/plan-types.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { DownloadSettings } from "./download-settings.js";
import type { PullProgress } from "./progress-throttle.js";
import { pullModel, type PullResult, type PullStep } from "./pull-model.js";
import { fitCheckFor } from "./reference-plan.js";

export interface PullerDeps {
  config: Config;
  settings: DownloadSettings;
  llama?: LlamaLoader;
  logger?: Logger;
  hardware?: HardwareSnapshot;
  /** Progress interval for hosts (ms); a few updates a second by default. */
  progressIntervalMs?: number;
}

export interface PullCall {
  ref: string;
  force?: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: PullProgress) => void;
  onStep?: (step: PullStep) => void;
  /** The caller's logger (a stdio call's, with its req_id); absent: the puller's. */
  logger?: Logger;
}

/**
 * The pulls of one process (the stdio server's, serve-http's download: auto, the CLI's): each
 * with the fit check planned against the config, and one at a time per reference. Two downloads
 * of one file at once would write the same partial file; the second is refused with `busy`.
 */
export class ModelPuller {
  private readonly running = new Set<string>();

  constructor(private readonly deps: PullerDeps) {}

  async pull(call: PullCall): Promise<PullResult> {
    const key = call.ref.trim();
    if (this.running.has(key)) {
      throw new RuntimeError("busy", `${call.ref} is being pulled already (by another request); wait for that pull, or cancel it`, { details: { ref: call.ref } });
    }
    this.running.add(key);
    const { config, settings } = this.deps;
    const logger = call.logger ?? this.deps.logger;
    try {
      return await pullModel({
        ref: call.ref,
        settings,
        fitCheck: fitCheckFor(config, call.ref, {
          env: settings.env,
          ...(this.deps.llama ? { llama: this.deps.llama } : {}),
          ...(logger ? { logger } : {}),
          ...(this.deps.hardware ? { hardware: this.deps.hardware } : {}),
        }),
        ...(call.force === undefined ? {} : { force: call.force }),
        ...(call.signal ? { signal: call.signal } : {}),
        ...(call.onProgress ? { onProgress: call.onProgress } : {}),
        ...(call.onStep ? { onStep: call.onStep } : {}),
        ...(this.deps.progressIntervalMs === undefined ? {} : { progressIntervalMs: this.deps.progressIntervalMs }),
      });
    } finally {
      this.running.delete(key);
    }
  }
}
