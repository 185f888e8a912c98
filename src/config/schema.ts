import { z } from "zod";
import { parseByteSize } from "../shared/byte-size.js";
import { httpKeySchema, httpSchema, RESERVED_KEY_NAMES } from "./http-schema.js";
import { LOG_LEVELS, type LogLevel } from "./log-levels.js";
import { STDIO_DEFAULTS } from "./stdio-defaults.js";
import { ENGINE_KINDS } from "./engine-kinds.js";

/**
 * The config contract (see docs/config.md). Objects are strict: a misspelt key is reported,
 * never silently ignored. `.prefault({})` runs a missing section through its own defaults.
 */

const MiB = 1024 * 1024;

const positiveInt = z.number().int().positive();
/** Bytes: a number, or a string with a unit ("12GiB", "512MiB"). */
const byteSize = z.union([z.number().int().min(0), z.string().refine((value) => parseByteSize(value) !== null, { message: 'a size: bytes, or a number with a unit such as "12GiB" or "512MiB"' })]);
/** A memory figure the scheduler may use: a size, or `auto` (what plan sees as free at startup less llama.memory_margin). */
const budgetSize = z.union([z.literal("auto"), byteSize]).default("auto");
const port = z.number().int().min(1).max(65535);
/** A merge window for streamed text: a few ms is invisible to a reader (a UI frame is 16 ms). */
const coalesceMs = z.number().int().min(0).max(1000).default(STDIO_DEFAULTS.coalesce_ms);

export const appSchema = z.strictObject({
  data_dir: z.string().min(1).default("./.local-ai"),
  /** Where `local-ai pull` puts models and where references in llama.models.*.path are looked up; null = <data_dir>/models. */
  models_dir: z.string().min(1).nullable().default(null),
  log_level: z.enum(LOG_LEVELS).default("info"),
  max_steps: positiveInt.default(8),
  max_parse_errors: z.number().int().min(0).default(2),
  /** Tool output put into the model context is capped (a marker says how much was cut). */
  max_tool_output_bytes: z.number().int().min(256).default(16 * 1024),
});

export const stdioSchema = z.strictObject({
  /** Longest accepted request line in bytes; longer lines are discarded and answered with invalid_request. */
  max_line_bytes: z.number().int().min(1024).default(STDIO_DEFAULTS.max_line_bytes),
  /** Outbound queue bound (messages); events beyond it are dropped, results wait. */
  writer_queue_size: z.number().int().min(1).default(STDIO_DEFAULTS.writer_queue_size),
  /** How long shutdown waits for the outbound queue to drain. */
  flush_timeout_ms: z.number().int().min(0).default(STDIO_DEFAULTS.flush_timeout_ms),
  /** How long shutdown waits for in-flight requests before cancelling them. */
  shutdown_grace_ms: z.number().int().min(0).default(STDIO_DEFAULTS.shutdown_grace_ms),
  /**
   * Text deltas of a turn that arrive within this many ms of the last one sent leave merged as one
   * `llm_chunk` / `thinking_chunk` (the first of a step is never delayed). 0 = one event per engine
   * chunk. Also used by serve-socket (Pod).
   */
  coalesce_ms: coalesceMs,
});

export const modelSchema = z.strictObject({
  engine: z.enum(ENGINE_KINDS).default("embedded"),
  /** A local GGUF path, or a reference (https URL, hf:owner/repo:QUANT) that `local-ai pull` downloads. */
  path: z.string().min(1).nullable().default(null),
  /** A reference in `path` that is not downloaded yet: "never" = model_missing with the `local-ai pull` fix; "auto" = download at warm-up. */
  download: z.enum(["never", "auto"]).default("never"),
  /** Unload the model (free its memory) after this many seconds without use; null = keep it loaded. */
  idle_unload_s: positiveInt.nullable().default(null),
  /** Never unloaded by the scheduler (to make room for another model) nor by idle_unload_s. */
  pin: z.boolean().default(false),
  port: port.default(8081),
  ctx_size: positiveInt.default(4096),
  gpu_layers: z.union([z.literal("auto"), z.number().int().min(0)]).default("auto"),
  threads: z.union([z.literal("auto"), positiveInt]).default("auto"),
  /** Concurrent generations on this model: context sequences (embedded) or server slots (llama-server). */
  parallel: z.number().int().min(1).max(64).default(2),
  /**
   * Embedded engine: disk budget for conversations' saved KV states (<data_dir>/kv-cache/), so a
   * conversation evicted from its sequence or left at shutdown resumes without re-evaluating its
   * history; least recently used states are deleted beyond it. 0 = off.
   */
  kv_cache_disk_bytes: z.number().int().min(0).default(1024 * MiB),
  /**
   * A reranker (POST /v1/rerank): llama-server is launched with `--reranking` (it then serves
   * rerank, not chat). The embedded engine reads it from the GGUF (a rank-pooling head) and needs
   * no flag; `openai` upstreams decide for themselves.
   */
  rerank: z.boolean().default(false),
  extra_args: z.array(z.string()).default([]),
  /** The `openai` engine's endpoint, or several: tried in order when one cannot be reached (failover, not load balancing). */
  base_url: z.union([z.string().url(), z.array(z.string().url()).min(1).max(16)]).nullable().default(null),
  /**
   * `openai` engine: the header that carries a digest of the conversation's cache key (also sent
   * as `prompt_cache_key`), for KV-aware routers; null: no header.
   */
  affinity_header: z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "an HTTP header name").nullable().default("x-session-affinity"),
  api_key: z.string().nullable().default(null),
  model: z.string().nullable().default(null),
});

/**
 * How the llama-server engine restarts a child that crashed or failed to start (every model with
 * engine llama-server): exponential backoff between attempts, and a circuit breaker that makes
 * callers fail fast after repeated failures (docs/engines.md).
 */
export const restartSchema = z.strictObject({
  /** First restart delay; doubles per failure (jittered) up to backoff_max_ms. */
  backoff_initial_ms: positiveInt.default(250),
  backoff_max_ms: positiveInt.default(10_000),
  /** Crashes or failed starts within circuit_window_ms that open the circuit. */
  circuit_failures: positiveInt.default(3),
  circuit_window_ms: positiveInt.default(60_000),
  /** How long an open circuit fails callers fast before one probe start is let through. */
  circuit_cooldown_ms: z.number().int().min(0).default(30_000),
});

export const llamaSchema = z.strictObject({
  binary: z.string().min(1).default("llama-server"),
  /** node-llama-cpp's binary for embedded models: auto = the local build of `npm run build:embedded` when there is one. */
  embedded_binary: z.enum(["auto", "prebuilt"]).default("auto"),
  restart: restartSchema.prefault({}),
  models: z.record(z.string().min(1), modelSchema).default({}),
  /** What loaded models may hold together (docs/models.md): idle ones are unloaded, least recently used first, to make room. */
  memory_budget: z.strictObject({ ram: budgetSize, vram: budgetSize }).prefault({}),
  /** Kept free when memory_budget is auto; auto = node-llama-cpp's own paddings (as plan uses). */
  memory_margin: z.union([z.literal("auto"), byteSize]).default("auto"),
  /** Loads waiting for memory (every loaded model busy): at most `length` wait, each at most timeout_s, then `busy`. */
  load_queue: z.strictObject({ length: positiveInt.default(32), timeout_s: positiveInt.default(120) }).prefault({}),
  /** idle_unload_s for every model that sets none; null = keep loaded. */
  idle_unload_s: positiveInt.nullable().default(null),
  /** Serve GGUFs in app.models_dir that no entry uses, by file name or pulled reference (docs/models.md); null = true for serve-http, false elsewhere. */
  serve_downloaded: z.boolean().nullable().default(null),
  /** The most tokens one POST /tokenize or stdio `tokenize` may make; more is refused (400) as soon as it is reached. */
  max_tokenize_tokens: positiveInt.default(256 * 1024),
});

export const agentSchema = z.strictObject({
  model: z.string().min(1).default("default"),
  system_prompt: z.string().default("You are a helpful assistant."),
  tools: z.array(z.string().min(1)).default(["*"]),
  temperature: z.number().min(0).max(2).default(0.7),
  seed: z.number().int().nullable().default(null),
  max_tokens: positiveInt.default(1024),
  /** Notes from the user's earlier sessions in front of each turn (false: none, and its turns are not indexed). */
  memory: z.boolean().default(true),
  /** The notes' budget in the model's tokens (estimated where the engine has no tokenizer). */
  memory_tokens: z.number().int().min(0).default(256),
});

export const mcpServerSchema = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().nullable().default(null),
  requires_approval: z.union([z.boolean(), z.array(z.string().min(1))]).default([]),
  timeout_ms: positiveInt.default(60_000),
});

/** `type` as other MCP hosts spell the transport of a remote server (Claude Desktop, Cursor, LM Studio, VS Code, Cline). */
const REMOTE_TYPES = { http: "http", "streamable-http": "http", streamableHttp: "http", streamable_http: "http", sse: "sse" } as const;
export const REMOTE_TYPE_NAMES = Object.keys(REMOTE_TYPES) as Array<keyof typeof REMOTE_TYPES>;

/**
 * A server reached over HTTP (docs/tools.md): `http` is MCP Streamable HTTP (the default; an old
 * server that answers it with 4xx is tried with the legacy HTTP+SSE transport), `sse` HTTP+SSE
 * only. `type` is read as `transport`. Header values take `${ENV}` like the rest of the file.
 */
export const mcpRemoteServerSchema = z
  .strictObject({
    url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
    transport: z.enum(["http", "sse"]).optional(),
    type: z.enum(REMOTE_TYPE_NAMES).optional(),
    headers: z.record(z.string(), z.string()).default({}),
    requires_approval: z.union([z.boolean(), z.array(z.string().min(1))]).default([]),
    timeout_ms: positiveInt.default(60_000),
    /** A client registered by hand with the authorization server (else it is registered dynamically). */
    oauth: z
      .strictObject({
        client_id: z.string().min(1),
        /** A file holding the client secret (first line), for a confidential client. */
        client_secret_file: z.string().min(1).nullable().default(null),
        scopes: z.array(z.string().min(1)).default([]),
      })
      .nullable()
      .default(null),
  })
  .transform(({ transport, type, ...server }) => ({ ...server, transport: transport ?? (type === undefined ? "http" : REMOTE_TYPES[type]) }));

export const mcpSchema = z.strictObject({
  servers: z.record(z.string().min(1), z.union([mcpServerSchema, mcpRemoteServerSchema])).default({}),
  /** How long a server's `elicitation/create` waits for the user's answer before it is declined. */
  elicitation_timeout_s: z.number().positive().default(600),
});

/** A key's name: what logs and metrics show (never the token), so a bounded, label-safe set of characters. */
export const configSchema = z
  .strictObject({
    app: appSchema.prefault({}),
    stdio: stdioSchema.prefault({}),
    llama: llamaSchema.prefault({}),
    agents: z.record(z.string().min(1), agentSchema).default({}),
    mcp: mcpSchema.prefault({}),
    http: httpSchema.prefault({}),
  })
  .superRefine((config, ctx) => {
    for (const [name, model] of Object.entries(config.llama.models)) {
      if (model.engine !== "openai" && model.path === null) {
        ctx.addIssue({
          code: "custom",
          path: ["llama", "models", name, "path"],
          message: `a GGUF file path is required for engine "${model.engine}"`,
        });
      }
      if (model.engine === "openai" && model.base_url === null) {
        ctx.addIssue({
          code: "custom",
          path: ["llama", "models", name, "base_url"],
          message: 'base_url is required for engine "openai" (e.g. http://127.0.0.1:8000/v1)',
        });
      }
      if (model.engine === "llama-server" && model.port === config.http.port) {
        ctx.addIssue({
          code: "custom",
          path: ["llama", "models", name, "port"],
          message: `port ${model.port} clashes with http.port; llama.models.${name}.port and http.port must differ`,
        });
      }
    }
    for (const [alias, agent] of Object.entries(config.http.model_aliases)) {
      if (!Object.hasOwn(config.agents, agent)) {
        ctx.addIssue({ code: "custom", path: ["http", "model_aliases", alias], message: `agent "${agent}" is not defined under agents (defined: ${Object.keys(config.agents).join(", ") || "none"})` });
      } else if (Object.hasOwn(config.agents, alias)) {
        ctx.addIssue({ code: "custom", path: ["http", "model_aliases", alias], message: `"${alias}" is an agent's name already: an agent's name always means that agent` });
      }
    }
    const seen = new Set<string>();
    for (const [index, key] of config.http.keys.entries()) {
      if ((RESERVED_KEY_NAMES as readonly string[]).includes(key.name)) {
        ctx.addIssue({ code: "custom", path: ["http", "keys", index, "name"], message: `"${key.name}" is reserved (${RESERVED_KEY_NAMES.join(", ")}: the bearer token's name and an unauthenticated request's)` });
      } else if (seen.has(key.name)) {
        ctx.addIssue({ code: "custom", path: ["http", "keys", index, "name"], message: `duplicate key name "${key.name}": each key needs its own name` });
      }
      seen.add(key.name);
    }
    for (const [name, agent] of Object.entries(config.agents)) {
      if (!(agent.model in config.llama.models)) {
        const known = Object.keys(config.llama.models);
        ctx.addIssue({
          code: "custom",
          path: ["agents", name, "model"],
          message: `model "${agent.model}" is not defined under llama.models (defined: ${known.length > 0 ? known.join(", ") : "none"})`,
        });
      }
    }
  });

export type Config = z.output<typeof configSchema>;
export type ModelConfig = z.output<typeof modelSchema>;
export type RestartConfig = z.output<typeof restartSchema>;
export type AgentConfig = z.output<typeof agentSchema>;
/** A server spawned over stdio. */
export type McpServerConfig = z.output<typeof mcpServerSchema>;
export type HttpKeyConfig = z.output<typeof httpKeySchema>;
/** A server reached over HTTP (Streamable HTTP or legacy SSE). */
export type McpRemoteServerConfig = z.output<typeof mcpRemoteServerSchema>;
/** One entry of mcp.servers. */
export type McpServerEntry = McpServerConfig | McpRemoteServerConfig;
export { LOG_LEVELS, type LogLevel };
