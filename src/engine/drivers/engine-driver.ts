import type { Logger } from "pino";
import type { Config, ModelConfig } from "../../config/schema.js";
import type { ChildRegistry } from "../../shared/process/child-registry.js";
import type { LlamaRuntime } from "../embedded/llama-runtime.js";
import type { Engine } from "../engine.js";
import type { EngineKind } from "../../config/engine-kinds.js";
import type { HelpProbe } from "../llama-server/help-probe.js";
import type { ModelFileSource } from "../model-file.js";

/** What a driver needs to build an engine (the registry's deps; the logger is the model's child). */
export interface EngineCreateDeps {
  config: Config;
  logger: Logger;
  llama: LlamaRuntime;
  /** Checks GGUF metadata before llama.cpp loads it. */
  validateModel?: (path: string) => Promise<void>;
  /** Where a model's GGUF is (a reference in `path` resolves to its download). */
  modelFile?: ModelFileSource;
  children: ChildRegistry;
  helpProbe: HelpProbe;
}

export interface ModelCapabilities {
  /** Function calling (native tool calls through the chat template or the upstream). */
  tools: boolean;
  /** POST /v1/embeddings works for this model. */
  embeddings: boolean;
  /** Image parts reach the model (not flattened to text). */
  vision: boolean;
  /** POST /v1/rerank can work for this model (embedded: the GGUF decides when it loads). */
  rerank: boolean;
}

/**
 * A kind whose weights are a GGUF at `path`, loaded on this machine: plan estimates it (the
 * scheduler counts that estimate), doctor reads the file. How it runs changes the plan:
 */
export interface LocalWeights {
  /**
   * `shared`: one context of ctx_size split among the parallel slots (llama-server's -c is the
   * total; a conversation gets ctx_size / parallel). `per_sequence`: each sequence has its own
   * ctx_size (embedded).
   */
  context: "shared" | "per_sequence";
  /**
   * `threads: auto`: which core count it starts from (`math`: node-llama-cpp's cpuMathCores;
   * `physical`: counted without node-llama-cpp, as a launch counts them) and what it makes of it.
   */
  threads: { cores: "math" | "physical"; auto(cores: number): number };
  /** It runs llama.binary: plan looks the binary up and shows the exact command line. */
  launchesServer: boolean;
}

/**
 * The doctor checks a model of this kind needs. The engine layer only names them; src/diagnostics
 * runs them (it sits above engine):
 * - model_file: the GGUF at `path` (or the download of a reference) is there and complete;
 * - model_endpoint: GET <base_url>/models answers and lists the model;
 * - model_plan: the GGUF fits this machine (plan);
 * - embedded_binary: node-llama-cpp's binary and its threads;
 * - llama_server_binary: llama.binary runs (`--version`);
 * - llama_server_processes: no leftover llama-server holds one of the kind's ports.
 */
export type EngineDoctorCheck = "model_file" | "model_endpoint" | "model_plan" | "embedded_binary" | "llama_server_binary" | "llama_server_processes";

/** A port a model's engine listens on (serve-http refuses to share it; doctor checks it is free). */
export interface EnginePort {
  host: string;
  port: number;
  /** The config key that moves it. */
  key: string;
  /** Who listens there, in words (doctor's finding). */
  owner: string;
}

/**
 * Everything that differs between engine kinds, in one place per kind (docs/architecture.md,
 * "Engine drivers"): the registry creates through it, describe-model, plan, the scheduler's
 * estimate, doctor and serve-http's port check ask it instead of testing `engine`.
 */
export interface EngineDriver {
  readonly kind: EngineKind;
  /** The engine for `llama.models.<name>`; its implementation is imported on the first call (cold start). */
  create(name: string, model: ModelConfig, deps: EngineCreateDeps): Promise<Engine>;
  /** What the model can do, from its config alone (nothing is loaded or contacted). */
  capabilities(model: ModelConfig): ModelCapabilities;
  /** null: the model runs elsewhere (an endpoint): nothing to plan, no memory here, no file. */
  readonly local: LocalWeights | null;
  readonly doctorChecks: readonly EngineDoctorCheck[];
  /** The ports its engine listens on. */
  ports(name: string, model: ModelConfig): EnginePort[];
}
