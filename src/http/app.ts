import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { HttpDeps } from "./http-deps.js";
import { DEFAULT_KEY_NAME, fullRightsKey } from "./keys/api-key.js";
import { KeyRing } from "./keys/key-ring.js";
import { keyAuth } from "./middleware/key-auth.js";
import { crossSiteGuard } from "./middleware/cross-site-guard.js";
import { hostCheck } from "./middleware/host-check.js";
import { InFlightWork } from "./request/in-flight-work.js";
import { HttpError, toOpenAiError } from "./http-error.js";
import { messagesDialect } from "./messages/messages-routes.js";
import { chatDialect } from "./openai/chat-route.js";
import { registerCompletionsRoute } from "./openai/completions-route.js";
import { registerEmbeddingsRoute } from "./openai/embeddings-route.js";
import { registerRerankRoute } from "./openai/rerank-route.js";
import { registerTokenizeRoutes } from "./routes/tokenize.js";
import { registerHealthRoute } from "./routes/health.js";
import { registerMetricsRoute } from "./routes/metrics.js";
import { registerModelsRoute } from "./routes/models.js";
import { requestContext } from "./middleware/request-context.js";
import { requestLogger, requestRecord } from "./request/request-record.js";
import { noMetrics } from "../shared/metrics-recorder.js";
import { responsesDialect } from "./responses/responses-routes.js";
import { errorShapeOf, useErrorShape } from "./responder/error-shape.js";
import type { DialectRoutes, HttpDialect } from "./responder/http-dialect.js";
import { streamSettings } from "./http-deps.js";
import { ModelResolver } from "./resolve-model.js";
import { SessionGate } from "./turn/session-gate.js";

/** The API dialects that answer agent turns, each in its folder (responder/http-dialect.ts). */
const DIALECTS: readonly HttpDialect[] = [chatDialect, responsesDialect, messagesDialect];

export interface HttpApp {
  app: Hono;
  /** The one `model` -> agent resolution every dialect uses. */
  resolver: ModelResolver;
  gate: SessionGate;
  inFlight: InFlightWork;
}

/**
 * The HTTP front door as a plain Hono app: no socket, so unit tests drive it with `app.request()`
 * and serve.ts puts it on @hono/node-server. Order matters: the request context comes first (every
 * answer, a refusal included, gets its X-Request-Id, is counted and logged once), the Host check
 * guards everything (DNS rebinding), the cross-site guard refuses foreign origins and non-JSON
 * bodies on /v1/* before CORS answers an allowed origin's preflight, /health stays open, /metrics
 * (with http.metrics, unless http.metrics_public) and /v1/* need a key (the bearer token or one of
 * http.keys) whose scope and limits allow the request.
 */
export function createHttpApp(deps: HttpDeps): HttpApp {
  const { settings } = deps;
  const app = new Hono();
  const gate = new SessionGate(settings.sessionQueue);
  const inFlight = new InFlightWork();
  const startedAt = Math.floor(Date.now() / 1000);
  const resolver = new ModelResolver({ agents: deps.agents, aliases: settings.modelAliases, unknownModel: settings.unknownModel });
  const keys = [...(settings.bearerToken === null ? [] : [fullRightsKey(DEFAULT_KEY_NAME, settings.bearerToken)]), ...(settings.keys ?? [])];
  const ring = keys.length === 0 ? null : new KeyRing(keys);

  app.use("*", requestContext({ logger: deps.logger, metrics: deps.metrics?.recorder ?? noMetrics }));
  // Before every guard: a refusal under a dialect's paths (Host, auth, body, 404) is in its shape.
  for (const dialect of DIALECTS) for (const path of dialect.paths) app.use(path, useErrorShape(dialect.errorShape));
  app.use("*", hostCheck(settings));
  // The llama-server paths outside /v1 (rerank, tokenize) are guarded as /v1 is.
  const topLevel = ["/rerank", "/tokenize", "/detokenize"];
  app.use("/v1/*", crossSiteGuard(settings));
  for (const path of topLevel) app.use(path, crossSiteGuard(settings));
  // No CORS headers at all unless origins are configured: browsers then refuse cross-origin reads.
  if (settings.corsOrigins.length > 0) {
    app.use("*", cors({ origin: settings.corsOrigins, allowHeaders: ["Authorization", "Content-Type", "X-Local-AI-Events", "X-Api-Key", "Anthropic-Version", "Anthropic-Beta"], allowMethods: ["GET", "POST", "DELETE", "OPTIONS"], exposeHeaders: ["X-Request-Id"] }));
  }
  registerHealthRoute(app, deps, inFlight, ring);
  // One instance: its per-key limits are shared by every path it guards (/v1/*, the top-level paths, /metrics).
  const auth = keyAuth(ring, keys, deps.logger);
  if (deps.metrics !== undefined) {
    if (settings.metricsPublic !== true) app.use("/metrics", auth);
    registerMetricsRoute(app, deps.metrics);
  }
  const bodyLimited = bodyLimit({
    maxSize: settings.maxBodyBytes,
    onError: () => {
      throw new HttpError("payload_too_large", `The request body is larger than http.max_body_bytes (${settings.maxBodyBytes} bytes)`);
    },
  });
  for (const path of ["/v1/*", ...topLevel]) {
    app.use(path, auth);
    app.use(path, bodyLimited);
  }
  registerModelsRoute(app, deps, resolver, startedAt);
  const routes: DialectRoutes = { deps, resolver, gate, inFlight, shutdownSignal: deps.shutdownSignal, stream: streamSettings(settings) };
  for (const dialect of DIALECTS) dialect.register(app, routes);
  if (deps.models !== undefined) {
    registerEmbeddingsRoute(app, deps, resolver, deps.models);
    registerCompletionsRoute(app, deps, resolver, deps.models, routes);
    registerRerankRoute(app, deps, resolver, deps.models);
    registerTokenizeRoutes(app, deps, resolver, deps.models);
  }

  app.notFound((c) => {
    const mapped = toOpenAiError(new HttpError("not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}`));
    return c.json(errorShapeOf(c)(mapped, requestRecord(c)?.id), mapped.status);
  });
  app.onError((error, c) => {
    const mapped = toOpenAiError(error);
    const { status, body } = mapped;
    // A client that went away cancels its turn: expected, not a server failure.
    const log = requestLogger(c, deps.logger);
    if (body.error.code === "cancelled") log.info({ path: c.req.path, reason: body.error.message }, "request cancelled");
    else if (status >= 500) log.error({ err: error, path: c.req.path }, "request failed");
    else log.debug({ code: body.error.code, path: c.req.path }, "request refused");
    return c.json(errorShapeOf(c)(mapped, requestRecord(c)?.id), status);
  });
  return { app, resolver, gate, inFlight };
}
