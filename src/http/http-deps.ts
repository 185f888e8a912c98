import type { PsReport } from "../engine/scheduler/model-ps.js";
import type { Logger } from "pino";
import type { StatelessTurnOptions, TurnOptions, TurnRequest } from "../agent/turn-request.js";
import type { StatelessTurnRequest } from "../agent/stateless-turn.js";
import type { SessionTurnOutcome, TurnOutcome } from "../agent/turn-outcome.js";
import type { ModelDescription } from "../engine/describe-model.js";
import type { RuntimeHealth } from "../diagnostics/runtime-health.js";
import type { Engine } from "../engine/engine.js";
import type { ApiKey } from "./keys/api-key.js";
import type { McpRemoteServerConfig } from "../tools/mcp/mcp-server-spec.js";
import type { McpServerStatus } from "../tools/mcp/mcp-tool-provider.js";
import type { ToolProvider } from "../tools/tool-types.js";
import type { MetricsRecorder } from "../shared/metrics-recorder.js";
import type { TurnStreamSettings } from "./sse/turn-stream.js";

/** A turn's cancel signal, event sink, the key's tool scope; `logger`: the request's (its id on the turn's log lines). */
export type TurnRunOptions = Pick<TurnOptions, "signal" | "emit" | "toolScope" | "logger" | "pauseForElicitation" | "meter">;

/** What the HTTP layer needs from the SessionRunner (a stub implements it in unit tests). */
export interface TurnRunner {
  /** Session mode: history from the store. */
  runTurn(request: TurnRequest, options: TurnRunOptions): Promise<SessionTurnOutcome>;
  /** Client-kept history: the request's messages are the whole context; nothing is stored. */
  runStateless(request: StatelessTurnRequest, options: StatelessTurnOptions): Promise<TurnOutcome>;
  /** The prompt tokens a stateless turn of this request would evaluate (system prompt, conversation, tools). */
  countPromptTokens?(request: StatelessTurnRequest, signal: AbortSignal): Promise<number>;
}

/** The `http:` section after CLI flags were applied, plus test-only knobs. */
export interface HttpSettings {
  host: string;
  port: number;
  bearerToken: string | null;
  /** http.keys, tokens read (the bearer token is the key "default" besides them). */
  keys?: readonly ApiKey[];
  corsOrigins: string[];
  allowedHosts: string[];
  maxBodyBytes: number;
  sessionQueue: boolean;
  /** http.coalesce_ms: text deltas of a streamed turn within this window leave as one chunk (0 or unset = off). */
  coalesceMs?: number;
  /** A quiet stream gets its dialect's heartbeat after this long without output (serve-http: http.keepalive_s; default 10 s). */
  keepAliveMs?: number;
  /** A stream whose client reads slower than the turn produces is cancelled beyond this (default 8 MiB). */
  maxPendingStreamBytes?: number;
  /** http.model_aliases: model names clients insist on (exact or glob) -> agent names. */
  modelAliases?: Readonly<Record<string, string>>;
  /** http.unknown_model (default `error`). */
  unknownModel?: "error" | "default";
  /** http.metrics_public: GET /metrics answers without the bearer token (default: behind it). */
  metricsPublic?: boolean;
  /** The store of POST /v1/responses (`http.responses`); absent: nothing is stored, previous_response_id finds nothing. */
  responses?: ResponseStoreSettings;
}

/** The streams' settings with their defaults filled: once, in createHttpApp, for every route that streams. */
export function streamSettings(settings: HttpSettings): TurnStreamSettings {
  return { keepAliveMs: settings.keepAliveMs ?? 10_000, coalesceMs: settings.coalesceMs ?? 0, maxPendingBytes: settings.maxPendingStreamBytes ?? 8 * 1024 * 1024 };
}

/** Where stored responses live (<data_dir>/responses) and the bounds of that store. */
export interface ResponseStoreSettings {
  dir: string;
  maxStored: number;
  maxBytes: number;
  ttlMs: number;
}

/** The configured models, for embeddings, text completions and the facts in GET /v1/models. */
export interface ModelAccess {
  /** `llama.models` names, in config order. */
  names: readonly string[];
  /** llama.max_tokenize_tokens: the most tokens one POST /tokenize may make (absent: no limit). */
  maxTokenizeTokens?: number;
  /** The model's engine, created on first use; it loads or starts itself when asked to work. */
  engine(name: string): Promise<Engine>;
  /** Engine kind, context length and capabilities; loads nothing. */
  describe(name: string): ModelDescription;
  /** The scheduler's view: every model's status and memory, and the budget (loads nothing). */
  ps(): Promise<PsReport>;
  /**
   * A GGUF in app.models_dir that no config entry uses, named by file name (with or without
   * `.gguf`) or by the reference it was pulled from: the `llama.models` name that serves it (a
   * configured entry using the file, or the file adopted with default settings), `served: false`
   * when llama.serve_downloaded is off; null when there is no such file. Absent: none are served.
   */
  onDemand?(requested: string): Promise<OnDemandModel | null>;
  /** The downloaded models served on demand, by name (none when llama.serve_downloaded is off). */
  downloaded?(): Promise<string[]>;
}

/** An MCP client for servers a request names (local-ai's McpToolProvider, made by the composition root). */
export interface McpClient extends ToolProvider {
  status(): McpServerStatus[];
}

export type McpClientFactory = (servers: Record<string, McpRemoteServerConfig>) => McpClient;

export type OnDemandModel = { served: true; name: string } | { served: false; file: string };

export interface HttpDeps {
  settings: HttpSettings;
  /** Agent name -> model name, in config order (the first is the default). */
  agents: Record<string, string>;
  runner: () => TurnRunner;
  /** Embeddings and completions are served, and /v1/models carries model facts, only when set. */
  models?: ModelAccess;
  health: () => RuntimeHealth;
  version: string;
  logger: Logger;
  /** Aborted when the server shuts down: running turns are cancelled through it. */
  shutdownSignal?: AbortSignal;
  /**
   * The MCP client for the servers a Responses request names in `mcp` tools; set only when
   * `http.allow_request_mcp` is true (absent: such a request is refused before anything connects).
   */
  mcpClient?: McpClientFactory;
  /** http.metrics: GET /metrics is served, and requests are counted, only when set. */
  metrics?: HttpMetrics;
}

/** The metrics of this server: where requests are reported, and the text Prometheus scrapes. */
export interface HttpMetrics {
  recorder: MetricsRecorder;
  exposition(): Promise<{ contentType: string; body: string }>;
}
