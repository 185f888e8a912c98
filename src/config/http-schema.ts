import { z } from "zod";
import { parseAllowedHost } from "./allowed-host.js";
import { STDIO_DEFAULTS } from "./stdio-defaults.js";

/** The `http` section of the config (serve-http): its own file, as the section grew past the rest. */

const MiB = 1024 * 1024;
const positiveInt = z.number().int().positive();
const port = z.number().int().min(1).max(65535);
/** Like stdio.coalesce_ms (see schema.ts). */
const coalesceMs = z.number().int().min(0).max(1000).default(STDIO_DEFAULTS.coalesce_ms);

const keyName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "a key name: 1-64 letters, digits, '_', '.' or '-'");
const globList = z.array(z.string().min(1)).default(["*"]);

/** One `http.keys` entry: a token (from exactly one source) and what it may do. docs/operations.md "Keys". */
export const httpKeySchema = z
  .strictObject({
    name: keyName,
    token: z.string().min(1).nullable().default(null),
    /** A file (mode 600) whose first line is the token; relative to the config's folder. */
    token_file: z.string().min(1).nullable().default(null),
    /** The name of an environment variable holding the token. */
    token_env: z.string().min(1).nullable().default(null),
    /** Agent names (or `llama.models` names, for embeddings and completions) the key may use: globs. */
    models: globList,
    /** Request paths under /v1 the key may call: globs, `*` crosses `/` (`/v1/chat/*`). */
    endpoints: globList,
    /** Tools the key's turns may run: globs as in `agents.<name>.tools`. */
    tools: globList,
    max_concurrent: positiveInt.nullable().default(null),
    requests_per_minute: positiveInt.nullable().default(null),
  })
  .superRefine((key, ctx) => {
    const sources = [key.token, key.token_file, key.token_env].filter((source) => source !== null).length;
    if (sources !== 1) ctx.addIssue({ code: "custom", path: ["token"], message: `key "${key.name}" needs exactly one of token, token_file, token_env (it has ${sources})` });
  });

/** Names the bearer token and an unauthenticated request go by (logs, metrics). */
export const RESERVED_KEY_NAMES = ["default", "none"] as const;

export const httpSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  port: port.default(8080),
  bearer_token: z.string().min(1).nullable().default(null),
  /** A file holding the token (first line), so it need not be in the config or on a command line. */
  bearer_token_file: z.string().min(1).nullable().default(null),
  /** Scoped API keys; the bearer token above stays a key named "default" with every right. */
  keys: z.array(httpKeySchema).default([]),
  cors_origins: z.array(z.string()).default([]),
  max_body_bytes: positiveInt.default(10 * MiB),
  /** Extra Host header names accepted besides the bound host, localhost, 127.0.0.1 and [::1] (DNS-rebinding guard). */
  allowed_hosts: z.array(z.string().min(1)).default([]),
  /** false: a second request on a session with a turn in flight gets 409; true: it waits its turn. */
  session_queue: z.boolean().default(false),
  /** Like stdio.coalesce_ms, for streamed chat completions (SSE chunks and opt-in events). */
  coalesce_ms: coalesceMs,
  /**
   * A stream quiet this long (a long prompt being read, a model loading, a slow tool) gets an event
   * (Responses `response.in_progress`, Messages `ping`, chat completions an SSE comment): clients
   * with an idle timeout (Codex CLI) count events, not comments.
   */
  keepalive_s: z.number().min(0.5).max(300).default(5),
  /** Stored responses of POST /v1/responses (<data_dir>/responses): the oldest go first past any bound. */
  responses: z
    .strictObject({
      max_stored: positiveInt.default(1000),
      max_bytes: positiveInt.default(256 * MiB),
      ttl_s: positiveInt.default(30 * 24 * 3600),
    })
    .prefault({}),
  /** Model names clients insist on (Codex, Claude Code): exact names or globs (`*`, `?`) -> agent names. */
  model_aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
  /** A `model` nothing matches: `error` (404 listing what exists) or `default` (the default agent answers). */
  unknown_model: z.enum(["error", "default"]).default("error"),
  /**
   * `mcp` tools in POST /v1/responses: this server connects to the server_url a request names.
   * Off by default: a client could make the server reach any address it can (docs/http-api.md).
   */
  allow_request_mcp: z.boolean().default(false),
  /**
   * Hosts an MCP server a request names may be on although their address is loopback, link-local
   * or private (refused otherwise): `name`, `name:port`, an IP address, `[v6]:port` (docs/config.md).
   */
  request_mcp_allowed_hosts: z
    .array(
      z.string().superRefine((entry, ctx) => {
        const parsed = parseAllowedHost(entry);
        if (typeof parsed === "string") ctx.addIssue({ code: "custom", message: parsed });
      }),
    )
    .default([]),
  /** GET /metrics (Prometheus text) and the request counters behind it; off by default (docs/operations.md). */
  metrics: z.boolean().default(false),
  /** GET /metrics without the bearer token (a scraper on a trusted network); default: behind it. */
  metrics_public: z.boolean().default(false),
});

