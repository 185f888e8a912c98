import path from "node:path";
import type { ConfigState } from "../../config/load-config.js";
import type { Config } from "../../config/schema.js";
import { createHttpApp } from "../../http/app.js";
import { resolveBearerToken } from "../../http/keys/bearer-token.js";
import type { ApiKey } from "../../http/keys/api-key.js";
import { resolveApiKeys } from "../../http/keys/resolve-keys.js";
import type { HttpSettings, McpClientFactory } from "../../http/http-deps.js";
import { assertNoPortClash } from "../../http/server/port-check.js";
import { listenHttp } from "../../http/server/serve.js";
import type { Logger } from "../../logging/create-logger.js";
import { readPackageInfo } from "../../shared/version.js";
import type { McpRemoteServerConfig } from "../../tools/mcp/mcp-server-spec.js";
import { McpToolProvider } from "../../tools/mcp/mcp-tool-provider.js";
import { RemoteAddressPolicy } from "../../tools/mcp/remote-address-policy.js";
import { createModelAccess } from "../runtime/model-access.js";
import { createRuntime, type Runtime } from "../runtime/runtime.js";
import { startServerProcess } from "../process/server-process.js";
import type { SignalLatch } from "../process/signal-latch.js";
import type { ServeOutcome } from "./serve-outcome.js";

export interface ServeHttpOptions {
  config: Config;
  configState: ConfigState & { status: "loaded" };
  /** --host; http.host when absent. */
  host?: string | undefined;
  /** --port, already checked to be 0-65535; http.port when absent. */
  port?: number | undefined;
  bearerToken?: string | undefined;
  bearerTokenFile?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Signals held since start-up (main.ts): taken over by the server's shutdown handling. */
  signals?: SignalLatch | undefined;
  /** --exit-on-stdin-eof: stop gracefully when this stream (the process's stdin) ends. */
  lifeline?: (NodeJS.ReadableStream & { destroy?(): void }) | undefined;
}

/** Bound on connecting to, and listing the tools of, one MCP server a Responses request names. */
const REQUEST_MCP_START_MS = 20_000;

/** In-flight turns get this long to finish at shutdown before they are cancelled. */
const SHUTDOWN_GRACE_MS = 5000;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/**
 * `local-ai serve-http`: the OpenAI-compatible API, started eagerly (engine, MCP servers, memory)
 * and served until SIGTERM / SIGINT, then stopped gracefully. Resolves once it has stopped, or
 * with the one line that says why it could not start.
 */
export async function serveHttp(options: ServeHttpOptions): Promise<ServeOutcome> {
  const { config, configState, env } = options;
  const port = options.port ?? config.http.port;
  let bearerToken: string | null;
  let keys: ApiKey[];
  try {
    assertNoPortClash(config, port);
    bearerToken = await resolveBearerToken({ flag: options.bearerToken, flagFile: options.bearerTokenFile, env, configToken: config.http.bearer_token, configFile: config.http.bearer_token_file });
    keys = await resolveApiKeys({ bearerToken, keys: config.http.keys, env });
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const settings: HttpSettings = {
    host: options.host ?? config.http.host,
    port,
    bearerToken,
    keys,
    corsOrigins: config.http.cors_origins,
    allowedHosts: config.http.allowed_hosts,
    maxBodyBytes: config.http.max_body_bytes,
    sessionQueue: config.http.session_queue,
    coalesceMs: config.http.coalesce_ms,
    keepAliveMs: config.http.keepalive_s * 1000,
    responses: { dir: path.join(config.app.data_dir, "responses"), maxStored: config.http.responses.max_stored, maxBytes: config.http.responses.max_bytes, ttlMs: config.http.responses.ttl_s * 1000 },
    modelAliases: config.http.model_aliases,
    unknownModel: config.http.unknown_model,
    metricsPublic: config.http.metrics_public,
    ...keepAliveOverride(env),
  };

  const serving = startServerProcess({ level: config.app.log_level, env, signals: options.signals, lifeline: options.lifeline });
  const { logger } = serving;
  // prom-client is imported only when metrics are on; one registry for this server (docs/operations.md).
  // The gauges read the runtime at scrape time; the runtime reports to the metrics: built in that order.
  const built: { runtime: Runtime | null } = { runtime: null };
  const metrics = config.http.metrics ? new (await import("../metrics/prom-metrics.js")).PromMetrics(() => built.runtime?.modelSample() ?? null) : undefined;
  // serve-http serves the downloaded models by default (llama.serve_downloaded, docs/models.md).
  const runtime = createRuntime({ configState, logger, info: readPackageInfo(), env, serveDownloaded: true, ...(metrics ? { metrics } : {}) });
  built.runtime = runtime;
  const shutdown = new AbortController();
  const { app } = createHttpApp({
    settings,
    agents: Object.fromEntries(Object.entries(config.agents).map(([name, agent]) => [name, agent.model])),
    runner: () => runtime.sessionRunner(),
    models: createModelAccess(runtime.liveConfig(), () => runtime.engines(), () => runtime.downloadedModels()),
    health: () => runtime.health(),
    version: runtime.info.version,
    logger,
    shutdownSignal: shutdown.signal,
    // The one MCP client (the config's servers use it too), for the servers a request names: untrusted ones.
    ...(config.http.allow_request_mcp ? { mcpClient: requestMcpClient(config.http.request_mcp_allowed_hosts, logger) } : {}),
    ...(metrics ? { metrics: { recorder: metrics, exposition: () => metrics.exposition() } } : {}),
  });
  let server: Awaited<ReturnType<typeof listenHttp>>;
  try {
    server = await listenHttp(app, settings.host, settings.port);
  } catch (error) {
    await serving.finish();
    return { ok: false, message: (error as Error).message };
  }
  // The port is bound only now, so the actual one (for --port 0) is what gets logged.
  settings.port = server.port;
  // Key names only: tokens are never logged.
  const auth = settings.bearerToken !== null || keys.length > 0;
  logger.info({ host: settings.host, port: server.port, version: runtime.info.version, auth, keys: keys.map((key) => key.name) }, "serve-http listening");
  if (!LOOPBACK.has(settings.host) && !auth) {
    logger.warn({ host: settings.host }, "serve-http is bound to a non-loopback address without a bearer token: anyone who can reach it can run the agent (set http.bearer_token or http.keys)");
  }

  // Eager warm-up: /health says "starting" (503) until it is done; chats that arrive meanwhile
  // wait for the same shared warm-up inside the SessionRunner.
  const startedAt = Date.now();
  logger.info("warming up the default agent (engine, MCP servers, memory)");
  void runtime.warmUpAll(serving.signal).then(
    () => logger.info({ ms: Date.now() - startedAt }, "warm-up done; ready"),
    (error: unknown) => {
      if (!serving.signal.aborted) logger.error({ err: error }, "warm-up failed; /health reports down and each chat retries it");
    },
  );

  await serving.stopRequested();
  logger.info("serve-http stopping: no new connections; in-flight turns get 5 s");
  await server.close(SHUTDOWN_GRACE_MS, logger, () => shutdown.abort("server shutting down"));
  await runtime.close();
  logger.info("serve-http stopped");
  await serving.finish();
  return { ok: true, exitCode: 0 };
}

/**
 * The MCP client for the servers a request names: untrusted (only addresses the policy allows,
 * Streamable HTTP only, failures in our words); one policy for every request.
 */
function requestMcpClient(allowedHosts: readonly string[], logger: Logger): McpClientFactory {
  const untrusted = new RemoteAddressPolicy(allowedHosts);
  const requestLogger = logger.child({ component: "request-mcp" });
  return (servers: Record<string, McpRemoteServerConfig>) => new McpToolProvider(servers, { logger: requestLogger, env: {}, startTimeoutMs: REQUEST_MCP_START_MS, untrusted });
}

/** Tests shorten the keep-alive interval below http.keepalive_s's floor (0.5 s). */
function keepAliveOverride(env: Readonly<Record<string, string | undefined>>): Partial<HttpSettings> {
  const ms = Number(env.LOCAL_AI_HTTP_KEEPALIVE_MS);
  return Number.isInteger(ms) && ms > 0 ? { keepAliveMs: ms } : {};
}
