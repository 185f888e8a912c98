import type { Command } from "commander";
import { createModelAccess } from "../../app/model-access.js";
import { createRuntime } from "../../app/runtime.js";
import { startServerProcess } from "../../app/server-process.js";
import { createHttpApp } from "../../http/app.js";
import { resolveBearerToken } from "../../http/bearer-token.js";
import type { HttpSettings } from "../../http/http-deps.js";
import { assertNoPortClash } from "../../http/port-check.js";
import { listenHttp } from "../../http/serve.js";
import { readPackageInfo } from "../../shared/version.js";
import type { CliDeps } from "../cli-deps.js";
import { loadServingConfig } from "../serving-config.js";

export interface ServeHttpOptions {
  config?: string;
  mcpConfig?: string;
  host?: string;
  port?: string;
  bearerToken?: string;
  bearerTokenFile?: string;
}

/** In-flight turns get this long to finish at shutdown before they are cancelled. */
const SHUTDOWN_GRACE_MS = 5000;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** The `serve-http` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runServeHttpCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ServeHttpOptions>();
  const fail = (message: string): void => {
    deps.stderr.write(`local-ai serve-http: ${message}\n`);
    deps.setExitCode(1);
  };
  const loaded = await loadServingConfig(options, deps);
  if (!loaded.ok) return fail(loaded.message);
  const { config, configState } = loaded;
  const port = options.port === undefined ? config.http.port : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return fail(`--port must be an integer 0-65535 (got ${JSON.stringify(options.port)})`);
  try {
    assertNoPortClash(config, port);
  } catch (error) {
    return fail((error as Error).message);
  }
  let bearerToken: string | null;
  try {
    bearerToken = await resolveBearerToken({ flag: options.bearerToken, flagFile: options.bearerTokenFile, env: deps.env, configToken: config.http.bearer_token, configFile: config.http.bearer_token_file });
  } catch (error) {
    return fail((error as Error).message);
  }
  const settings: HttpSettings = {
    host: options.host ?? config.http.host,
    port,
    bearerToken,
    corsOrigins: config.http.cors_origins,
    allowedHosts: config.http.allowed_hosts,
    maxBodyBytes: config.http.max_body_bytes,
    sessionQueue: config.http.session_queue,
    coalesceMs: config.http.coalesce_ms,
    ...keepAliveOverride(deps.env),
  };

  const serving = startServerProcess({ level: config.app.log_level, env: deps.env, signals: deps.signals });
  const { logger } = serving;
  const runtime = createRuntime({ configState, logger, info: readPackageInfo(), env: deps.env });
  const shutdown = new AbortController();
  const { app } = createHttpApp({
    settings,
    agents: Object.fromEntries(Object.entries(config.agents).map(([name, agent]) => [name, agent.model])),
    runner: () => runtime.sessionRunner(),
    models: createModelAccess(config, () => runtime.engines()),
    health: () => runtime.health(),
    version: runtime.info.version,
    logger,
    shutdownSignal: shutdown.signal,
  });
  let server: Awaited<ReturnType<typeof listenHttp>>;
  try {
    server = await listenHttp(app, settings.host, settings.port);
  } catch (error) {
    await serving.finish();
    return fail((error as Error).message);
  }
  // The port is bound only now, so the actual one (for --port 0) is what gets logged.
  settings.port = server.port;
  logger.info({ host: settings.host, port: server.port, version: runtime.info.version, auth: settings.bearerToken !== null }, "serve-http listening");
  if (!LOOPBACK.has(settings.host) && settings.bearerToken === null) {
    logger.warn({ host: settings.host }, "serve-http is bound to a non-loopback address without a bearer token: anyone who can reach it can run the agent (set http.bearer_token)");
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
  await server.close(SHUTDOWN_GRACE_MS, () => {
    logger.warn("cancelling the turns still running");
    shutdown.abort("server shutting down");
  });
  await runtime.close();
  logger.info("serve-http stopped");
  await serving.finish();
  process.exit(0);
}

/** Tests shorten the keep-alive interval to see the comments without waiting 10 s. */
function keepAliveOverride(env: Readonly<Record<string, string | undefined>>): Partial<HttpSettings> {
  const ms = Number(env.LOCAL_AI_HTTP_KEEPALIVE_MS);
  return Number.isInteger(ms) && ms > 0 ? { keepAliveMs: ms } : {};
}
