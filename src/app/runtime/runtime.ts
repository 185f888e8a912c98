import type { Logger } from "pino";
import type { SessionRunner } from "../../agent/session-runner.js";
import { requireConfig, type ConfigState } from "../../config/load-config.js";
import type { Config } from "../../config/schema.js";
import type { EngineRegistry } from "../../engine/create-engine.js";
import type { DoctorReport } from "../../diagnostics/doctor-report.js";
import type { RuntimeHealth } from "../../diagnostics/runtime-health.js";
import { runDoctor } from "../../diagnostics/run-doctor.js";
import { planWithTools } from "./plan-with-tools.js";
import type { ModelPlanReport } from "../../engine/plan/plan-types.js";
import type { StdioLimits } from "../../serving/stdio-limits.js";
import type { PackageInfo } from "../../shared/version.js";
import type { MetricsRecorder } from "../../shared/metrics-recorder.js";
import type { ModelSample } from "../metrics/prom-metrics.js";
import { LlamaRuntime } from "../../engine/embedded/llama-runtime.js";
import { modelThinks } from "../../models/model-thinking.js";
import type { SessionCatalog } from "../../store/store-types.js";
import type { SessionToolsRequest, ToolProvider } from "../../tools/tool-types.js";
import type { PullCall } from "../../models/model-puller.js";
import type { PullResult } from "../../models/pull-model.js";
import { planReference } from "../../models/reference-plan.js";
import { isModelReference } from "../../config/model-reference.js";
import { createAgentCore, type AgentCore } from "./agent-core.js";
import { killChildrenOnExit } from "./child-exit-hook.js";
import { ChildRegistry } from "../../shared/process/child-registry.js";
import { HelpProbe } from "../../engine/llama-server/help-probe.js";
import { createModelMemory } from "./model-memory.js";
import { createModelServices, type ModelServices } from "./model-services.js";
import { DownloadedModels } from "../../models/downloaded-models.js";
import { reportConfigState } from "./report-config.js";
import { stdioLimitsOf } from "./stdio-limits.js";
import { modelTokenizer } from "./model-tokenizer.js";
import type { TokenizerService } from "../../protocol/methods/tokenize.js";

export interface RuntimeOptions {
  configState: ConfigState;
  logger: Logger;
  info: PackageInfo;
  env: Readonly<Record<string, string | undefined>>;
  /** The front door already logged what is wrong with the config (serve-stdio does, at start). */
  configReported?: boolean;
  /** llama.serve_downloaded when the config leaves it null: true for serve-http, false elsewhere. */
  serveDownloaded?: boolean;
  /** Where engines and agents report (a PromMetrics when metrics are on); nothing is reported without it. */
  metrics?: MetricsRecorder;
}

/**
 * The composition root: everything a front door needs, built once from the config and handed
 * down. No module keeps state of its own.
 */
export interface Runtime {
  readonly info: PackageInfo;
  readonly configState: ConfigState;
  readonly logger: Logger;
  /** `log`: where the lines of this run go (a stdio call's logger, with its req_id); absent: the runtime's. */
  runDoctor(signal?: AbortSignal, log?: Logger): Promise<DoctorReport>;
  /** The turn entry; built on first use. Throws config_missing / config_invalid without a valid config. */
  sessionRunner(): SessionRunner;
  /** One engine per configured model (serve-http's embeddings and completions use them directly). Needs a valid config. */
  engines(): EngineRegistry;
  /** Session meta in data_dir (ACP). Needs a valid config. */
  sessionCatalog(): SessionCatalog;
  /** Deletes a stored session (its folder, KV states, memory entries); false when there was none. Needs a valid config. */
  deleteSession(userId: string, sessionId: string): Promise<boolean>;
  /** Whether a model of the runtime's table thinks (its chat template says so; model-thinking.ts). Needs a valid config. */
  modelThinks(model: string): Promise<boolean>;
  /** A front-door session's tools (config servers + its own); see AgentCore.sessionTools. Needs a valid config. */
  sessionTools(request: SessionToolsRequest): ToolProvider;
  /** The config's remote MCP servers that need a login (once they were tried), and a reconnect after one. Need a valid config. */
  mcpLogins(): { needing(): string[]; reconnect(server: string): Promise<void> };
  /**
   * `plan`: `{model}` one model, `{all: true}` every model, `{}` the default agent's model (every
   * model when no agent names one). Needs a valid config (config_missing / config_invalid otherwise).
   */
  runPlan(params: { model?: string; all?: boolean }, signal?: AbortSignal, log?: Logger): Promise<ModelPlanReport>;
  /** The server's limits, plus stdio.coalesce_ms for the chat method (the server moves whatever lines it is given). */
  stdioLimits(): StdioLimits & { coalesceMs: number };
  /** serve-http and serve-socket start eagerly: engine, MCP servers and memory. Needs a valid config. */
  warmUpAll(signal?: AbortSignal): Promise<void>;
  health(): RuntimeHealth;
  /** The scheduler's queue and each created model's memory, for the metrics; null before the core is built. */
  modelSample(): ModelSample | null;
  /**
   * Gets a model into app.models_dir (fit check first; resumable; see src/models/pull-model.ts).
   * Needs a valid config.
   */
  pull(call: PullCall): Promise<PullResult>;
  /** Frees the named loaded model, or every one; resolves with the names that were loaded. Needs a valid config. */
  unload(model?: string): Promise<string[]>;
  /** The models in app.models_dir served on demand (llama.serve_downloaded), adopted into the runtime's model table. Needs a valid config. */
  downloadedModels(): DownloadedModels;
  /** The runtime's model table: the config with the downloaded models adopted so far under llama.models. Needs a valid config. */
  liveConfig(): Config;
  /** The stdio `tokenize` / `detokenize` methods: a model's tokenizer. Needs a valid config. */
  tokenizer(): TokenizerService;
  close(): Promise<void>;
}

/** The model the first (default) agent uses; with no agent configured, the model an agent gets by default. */
function defaultAgentModel(config: Config): string | undefined {
  const model = Object.values(config.agents)[0]?.model ?? "default";
  return model !== undefined && model in config.llama.models ? model : undefined;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  const { configState, logger, info, env } = options;
  if (options.configReported !== true) reportConfigState(configState, logger);
  // One node-llama-cpp for the process: the embedded engine, plan and doctor share it.
  const llama = new LlamaRuntime(logger, configState.status === "loaded" ? configState.config.llama.embedded_binary : "auto");
  const loadLlama = (): ReturnType<LlamaRuntime["get"]> => llama.get();
  // The children this runtime starts (llama-server groups), killed by the exit hook if close() never runs.
  const children = new ChildRegistry();
  const removeExitHook = killChildrenOnExit(children);
  // Which flags the llama-server binary has: asked once per binary, for the engines and plan alike.
  const helpProbe = new HelpProbe();
  // The runtime's own model table: the config's llama.models, plus the downloaded models adopted
  // on demand (the loaded config itself is never changed: doctor and plan read it as written).
  let live: Config | null = null;
  const liveConfig = (): Config => {
    if (live !== null) return live;
    const config = requireConfig(configState);
    live = { ...config, llama: { ...config.llama, models: { ...config.llama.models } } };
    return live;
  };
  let models: ModelServices | null = null;
  const modelServices = (): ModelServices => (models ??= createModelServices(liveConfig(), env, loadLlama, logger));
  let downloaded: DownloadedModels | null = null;
  const downloadedModels = (): DownloadedModels =>
    (downloaded ??= new DownloadedModels(liveConfig(), modelServices().settings, liveConfig().llama.serve_downloaded ?? options.serveDownloaded ?? false));
  let core: AgentCore | null = null;
  const agentCore = (): AgentCore =>
    (core ??= createAgentCore(liveConfig(), {
      logger,
      env,
      llama,
      children,
      helpProbe,
      modelFile: (name, model) => modelServices().files.resolver(name, model),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      memory: createModelMemory(liveConfig(), { llama: loadLlama, logger, env, helpProbe, modelInfo: (name, model, signal) => modelServices().files.planInfo(name, model, signal) }),
    }));
  let warmUp: { state: RuntimeHealth["warmUp"]; error?: string } = { state: "idle" };
  const defaultModel = configState.status === "loaded" ? (Object.values(configState.config.agents)[0]?.model ?? "default") : "default";
  return {
    info,
    configState,
    logger,
    runDoctor: (signal, log) =>
      runDoctor(
        { configState, version: info.version, env, loadedModels: () => core?.health().engines ?? {}, memoryUse: () => core?.health().memory, ...(signal ? { signal } : {}) },
        { llama: loadLlama, logger: log ?? logger },
      ),
    runPlan: async (params, signal, log = logger) => {
      const config = requireConfig(configState);
      const model = params.all === true ? undefined : (params.model ?? defaultAgentModel(config));
      // A reference (or a path) that no entry is named after: plan it as `plan --model REF` does.
      if (model !== undefined && !(model in config.llama.models) && (isModelReference(model) || model.endsWith(".gguf"))) {
        return planReference(config, model, modelServices().settings, { env, llama: loadLlama, logger: log, ...(signal ? { signal } : {}) });
      }
      return planWithTools(config, { logger: log, env, llama: loadLlama, helpProbe, modelInfo: modelServices().files.planInfo, ...(model === undefined ? {} : { model }), ...(signal ? { signal } : {}) });
    },
    pull: (call) => modelServices().puller.pull(call),
    // Building the core starts nothing (engines load lazily); it answers an unknown name too.
    unload: async (model) => {
      // A downloaded model is named as a request names it (file name, reference): nothing to free when never adopted.
      if (model !== undefined && !(model in liveConfig().llama.models) && downloadedModels().served) {
        const found = await downloadedModels().find(model);
        if (found !== null) return found.name in liveConfig().llama.models ? agentCore().engines.unload(found.name) : [];
        await downloadedModels().list();
      }
      return agentCore().engines.unload(model);
    },
    downloadedModels,
    liveConfig,
    tokenizer: () => modelTokenizer(liveConfig(), (name) => agentCore().engines.get(name), defaultAgentModel),
    stdioLimits: () => stdioLimitsOf(configState),
    sessionRunner: () => agentCore().runner,
    engines: () => agentCore().engines,
    sessionCatalog: () => agentCore().catalog,
    deleteSession: (userId, sessionId) => agentCore().deleteSession(userId, sessionId),
    modelThinks: async (name) => {
      const model = liveConfig().llama.models[name];
      return model !== undefined && modelThinks(model, () => modelServices().files.locate(name, model));
    },
    sessionTools: (request) => agentCore().sessionTools(request),
    mcpLogins: () => {
      const tools = agentCore().tools;
      return { needing: () => tools.needingLogin(), reconnect: (server) => tools.reconnect(server) };
    },
    warmUpAll: async (signal) => {
      warmUp = { state: "starting" };
      try {
        await agentCore().warmUp(signal);
        warmUp = { state: "ready" };
      } catch (error) {
        warmUp = { state: "failed", error: error instanceof Error ? error.message : String(error) };
        throw error;
      }
    },
    modelSample: () => {
      if (core === null) return null;
      const memoryBytes: Record<string, number> = {};
      for (const [name, engine] of core.engines.created()) memoryBytes[name] = engine.health().memoryBytes ?? 0;
      return { queued: core.engines.scheduler.queued(), memoryBytes };
    },
    health: () => {
      const facts = core?.health() ?? { engines: {}, tools: [] };
      return { warmUp: warmUp.state, ...(warmUp.error === undefined ? {} : { warmUpError: warmUp.error }), defaultModel, ...facts };
    },
    close: async () => {
      await core?.close();
      removeExitHook();
      await llama.dispose();
    },
  };
}
