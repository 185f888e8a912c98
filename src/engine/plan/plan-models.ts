import { baseUrlsOf } from "../../config/model-endpoints.js";
import type { Logger } from "pino";
import type { Config, ModelConfig } from "../../config/schema.js";
import { formatBytes } from "../../shared/format-bytes.js";
import { RuntimeError, toRuntimeError } from "../../shared/runtime-error.js";
import { driverOf } from "../drivers/engine-drivers.js";
import { HelpProbe } from "../llama-server/help-probe.js";
import { describeHardware, probeHardware } from "./hardware.js";
import { lazyLlama, type LlamaLoader } from "../llama/llama-loader.js";
import { usableRam, usableVram } from "./memory-fit.js";
import { localModelInfo, planLocalModel, type LocalPlanContext, type ModelInfoSource } from "./plan-local-model.js";
import type { HardwareSnapshot, ModelFacts, ModelPlanEntry, ModelPlanReport } from "./plan-types.js";
import { measureToolSchemas, type AgentToolOffer } from "./tool-schema-budget.js";

export interface PlanOptions {
  logger?: Logger;
  signal?: AbortSignal;
  /** For the PATH lookup of llama.binary; process.env by default. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Only this model (`--model NAME`); an unknown name is invalid_params listing the known ones. */
  model?: string;
  /** A node-llama-cpp the caller already has (the runtime's); otherwise one is made and disposed. */
  llama?: LlamaLoader;
  /** Plan for this machine instead of probing the real one ("what if", tests). */
  hardware?: HardwareSnapshot;
  /** false: no llama.binary lookup and no command line (doctor checks the binary on its own). */
  checkBinary?: boolean;
  /** Overrides each model's `parallel` (chats generating at once on one model). */
  parallel?: number;
  /**
   * What each agent offers its model (listed from the MCP servers by the caller): each planned
   * model's entry then says how much of a conversation's context the schemas take.
   */
  toolOffers?: readonly AgentToolOffer[];
  /** Where each model's GGUF metadata comes from; the file at its `path` by default. */
  modelInfo?: ModelInfoSource;
  /** The runtime's llama-server flag cache; a fresh one (one `--help` per binary in this plan) by default. */
  helpProbe?: HelpProbe;
}

/** The report of `local-ai plan`: every configured model (or one), each planned on its own. */
export async function planModels(config: Config, options: PlanOptions = {}): Promise<ModelPlanReport> {
  const names = selectModels(config, options.model);
  const llama = lazyLlama({ ...(options.llama ? { loader: options.llama } : {}), ...(options.logger ? { logger: options.logger } : {}), binary: config.llama.embedded_binary });
  let probed: Promise<HardwareSnapshot> | undefined;
  const hardware = (): Promise<HardwareSnapshot> => {
    probed ??= options.hardware !== undefined ? Promise.resolve(options.hardware) : llama.get().then(({ llama: instance }) => probeHardware(instance));
    return probed;
  };
  const context: LocalPlanContext = {
    modelInfo: options.modelInfo ?? localModelInfo,
    config,
    llama: llama.get,
    hardware,
    env: options.env ?? process.env,
    checkBinary: options.checkBinary ?? true,
    helpProbe: options.helpProbe ?? new HelpProbe(),
    ...(options.parallel !== undefined ? { parallel: Math.max(1, options.parallel) } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  try {
    const models: ModelPlanEntry[] = [];
    // One at a time: each estimate is cheap, and the log stays in config order.
    for (const name of names) {
      options.signal?.throwIfAborted();
      models.push(await planEntry(name, config.llama.models[name] as ModelConfig, context));
    }
    if (options.toolOffers !== undefined) await addToolSchemas(models, config, options.toolOffers, llama.get, options);
    // Without a local model, node-llama-cpp is not loaded just to describe a GPU nobody uses.
    const snapshot = probed !== undefined ? await probed.catch(() => probeHardware(null)) : (options.hardware ?? (await probeHardware(null)));
    return { ok: models.every((entry) => entry.status === "ok"), hardware: describeHardware(snapshot), models, notes: togetherNotes(models, snapshot) };
  } finally {
    await llama.dispose();
  }
}

/**
 * Each entry gets its agents' tool schema shares, against the context the plan decided (a
 * llama-server slot gets ctx_size / parallel); a model that cannot be planned against its config.
 */
async function addToolSchemas(models: ModelPlanEntry[], config: Config, offers: readonly AgentToolOffer[], llama: LlamaLoader, options: PlanOptions): Promise<void> {
  const planned = new Set(models.map((entry) => entry.name));
  const windowOf = (name: string): number | undefined => {
    const ctx = models.find((entry) => entry.name === name)?.plan?.ctxSize;
    const model = config.llama.models[name];
    if (ctx === undefined || model === undefined) return undefined;
    return driverOf(model).local?.context === "shared" ? Math.floor(ctx / (options.parallel ?? model.parallel)) : ctx;
  };
  const shares = await measureToolSchemas(config, offers.filter((offer) => planned.has(offer.model)), { llama, windowOf, ...(options.signal ? { signal: options.signal } : {}) });
  for (const entry of models) {
    const mine = shares.filter((share) => share.model === entry.name);
    if (mine.length > 0) entry.toolSchemas = mine;
  }
}

/** One model's entry (the same as its line in planModels): the scheduler's memory estimate. */
export async function planModel(name: string, config: Config, options: PlanOptions = {}): Promise<ModelPlanEntry> {
  const report = await planModels(config, { ...options, model: name });
  return report.models[0] as ModelPlanEntry;
}

function selectModels(config: Config, only: string | undefined): string[] {
  const names = Object.keys(config.llama.models);
  if (only === undefined) return names;
  if (!names.includes(only)) {
    throw new RuntimeError("invalid_params", `Unknown model "${only}"; configured models: ${names.length > 0 ? names.join(", ") : "none"}`, {
      details: { model: only, known: names },
    });
  }
  return [only];
}

async function planEntry(name: string, model: ModelConfig, context: LocalPlanContext): Promise<ModelPlanEntry> {
  const local = driverOf(model).local;
  if (local === null) {
    // Runs elsewhere (an endpoint): nothing to plan on this machine.
    const baseUrl = baseUrlsOf(model).join(", ");
    return {
      name,
      engine: model.engine,
      status: "ok",
      remote: { baseUrl, model: model.model, summary: `remote: ${baseUrl}, model ${model.model ?? "(server default)"}` },
    };
  }
  let known: ModelFacts | undefined;
  try {
    const { facts, plan } = await planLocalModel(name, model, local, context, (facts) => (known = facts));
    return { name, engine: model.engine, status: "ok", model: facts, plan };
  } catch (error) {
    context.signal?.throwIfAborted();
    const failure = toRuntimeError(error);
    if (failure.code === "internal_error") context.logger?.error({ err: error, model: name }, "planning a model failed unexpectedly");
    const message = failure.code === "internal_error" ? `planning failed unexpectedly: ${(error as Error).message}` : failure.message;
    return {
      name,
      engine: model.engine,
      status: "error",
      ...(known ? { model: known } : {}),
      error: { code: failure.code, message, ...(failure.details ? { details: failure.details } : {}) },
    };
  }
}

/**
 * Each model is planned as if alone. When several would be loaded at once (serve-http loads all
 * of them), say whether they fit together.
 */
function togetherNotes(models: ModelPlanEntry[], hardware: HardwareSnapshot): string[] {
  const planned = models.filter((entry) => entry.plan !== undefined);
  if (planned.length < 2) return [];
  const ram = planned.reduce((total, entry) => total + (entry.plan?.estimates.ramBytes ?? 0), 0);
  const vram = planned.reduce((total, entry) => total + (entry.plan?.estimates.vramBytes ?? 0), 0);
  const notes: string[] = [];
  if (ram > usableRam(hardware)) notes.push(`the ${planned.length} local models together need ${formatBytes(ram)} of RAM, ${formatBytes(usableRam(hardware))} is usable: they fit one at a time, not all loaded at once`);
  if (vram > usableVram(hardware)) notes.push(`the ${planned.length} local models together need ${formatBytes(vram)} of VRAM, ${formatBytes(usableVram(hardware))} is usable: loaded together, later ones get fewer GPU layers`);
  return notes;
}
