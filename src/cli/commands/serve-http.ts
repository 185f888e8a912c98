import type { Command } from "commander";
import { installProcessGuards } from "../../app/process-guards.js";
import { createModelAccess } from "../../app/model-access.js";
import { createRuntime } from "../../app/runtime.js";
import { shutdownOnSignals } from "../../app/shutdown-signals.js";
import { applyMcpConfig } from "../../config/apply-mcp-config.js";
import { formatProblem } from "../../config/config-problem.js";
import { loadConfig } from "../../config/load-config.js";
import { createHttpApp } from "../../http/app.js";
import { resolveBearerToken } from "../../http/bearer-token.js";
import type { HttpSettings } from "../../http/http-deps.js";
import { assertNoPortClash } from "../../http/port-check.js";
import { listenHttp } from "../../http/serve.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { readPackageInfo } from "../../shared/version.js";
import type { CliDeps } from "../cli-deps.js";

interface ServeHttpOptions {
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

/**
 * `local-ai serve-http`: the OpenAI-compatible API. Unlike serve-stdio it needs a valid config
 * and starts eagerly; every startup failure is one clear line on stderr and exit code 1.
 */
export function registerServeHttpCommand(program: Command, deps: CliDeps): void {
  program
    .command("serve-http")
    .description("Serve the OpenAI-compatible HTTP API (chat completions with SSE streaming, completions, embeddings, models)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--host <host>", "bind address (default: http.host, 127.0.0.1)")
    .option("--port <port>", "port (default: http.port, 8080)")
    .option("--bearer-token <token>", "require Authorization: Bearer <token> on /v1/* (visible in the process list: prefer the file or $LOCAL_AI_TOKEN)")
    .option("--bearer-token-file <file>", "read the bearer token from a file (mode 600); also $LOCAL_AI_TOKEN, http.bearer_token_file, http.bearer_token")
    .option("--mcp-config <file>", "MCP servers from a YAML or JSON file (also the common {\"mcpServers\": {...}} shape)")
    .action(async (_options: ServeHttpOptions, command: Command) => {
      const options = command.optsWithGlobals<ServeHttpOptions>();
      const fail = (message: string): void => {
        deps.stderr.write(`local-ai serve-http: ${message}\n`);
        deps.setExitCode(1);
      };
      const configState = await applyMcpConfig(await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd }), options.mcpConfig, deps.env, deps.cwd);
      if (configState.status === "missing") return fail(`no config file at ${configState.path} (pass --config F or set LOCAL_AI_CONFIG; see config.example.yaml)`);
      if (configState.status === "invalid") {
        return fail(`invalid config ${configState.path}:\n${configState.problems.map((p) => `  ${formatProblem(configState.path, p)}`).join("\n")}`);
      }
      const { config } = configState;
      if (Object.keys(config.agents).length === 0) return fail(`no agent is configured under agents in ${configState.path}`);
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
        ...keepAliveOverride(deps.env),
      };

      const logger = createLogger({ level: config.app.log_level, env: deps.env });
      const exitNow = (code: number): void => {
        void flushLogger(logger, 500).then(() => process.exit(code));
      };
      const disposeGuards = installProcessGuards(logger, exitNow);
      const signals = shutdownOnSignals(logger, exitNow);
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
        signals.dispose();
        disposeGuards();
        await flushLogger(logger);
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
      void runtime.warmUpAll(signals.signal).then(
        () => logger.info({ ms: Date.now() - startedAt }, "warm-up done; ready"),
        (error: unknown) => {
          if (!signals.signal.aborted) logger.error({ err: error }, "warm-up failed; /health reports down and each chat retries it");
        },
      );

      await new Promise<void>((resolve) => signals.signal.addEventListener("abort", () => resolve(), { once: true }));
      logger.info("serve-http stopping: no new connections; in-flight turns get 5 s");
      await server.close(SHUTDOWN_GRACE_MS, () => {
        logger.warn("cancelling the turns still running");
        shutdown.abort("server shutting down");
      });
      await runtime.close();
      logger.info("serve-http stopped");
      signals.dispose();
      disposeGuards();
      await flushLogger(logger);
      process.exit(0);
    });
}

/** Tests shorten the keep-alive interval to see the comments without waiting 10 s. */
function keepAliveOverride(env: Readonly<Record<string, string | undefined>>): Partial<HttpSettings> {
  const ms = Number(env.LOCAL_AI_HTTP_KEEPALIVE_MS);
  return Number.isInteger(ms) && ms > 0 ? { keepAliveMs: ms } : {};
}
