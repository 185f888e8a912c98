import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { HttpDeps } from "./http-deps.js";
import { DEFAULT_KEY_NAME, fullRightsKey } from "./keys/api-key.js";
import { KeyRing } from "./keys/key-ring.js";
import { keyAuth } from "./middleware/key-auth.js";
import { crossSiteGuard } from "./middleware/cross-site-guard.js";
import { hostCheck } from "./middleware/host-check.js";
import { InFlightWork } from "./in-flight-work.js";
import { HttpError, toOpenAiError, type MappedError } from "./http-error.js";
import { anthropicError } from "./messages/anthropic-error.js";
import { registerMessagesRoutes } from "./messages/messages-routes.js";
import { registerChatRoute } from "./openai/chat-route.js";
import { registerCompletionsRoute } from "./openai/completions-route.js";
import { registerEmbeddingsRoute } from "./openai/embeddings-route.js";
import { registerRerankRoute } from "./openai/rerank-route.js";
import { registerTokenizeRoutes } from "./routes/tokenize.js";
import { registerHealthRoute } from "./routes/health.js";
import { registerMetricsRoute } from "./routes/metrics.js";
import { registerModelsRoute } from "./routes/models.js";
import { requestContext } from "./middleware/request-context.js";
import { requestLogger, requestRecord } from "./request-record.js";
import { noMetrics } from "../shared/metrics-recorder.js";
import { ResponseStore } from "./responses/response-store.js";
import { registerResponsesRoutes } from "./responses/responses-routes.js";
import { ModelResolver } from "./resolve-model.js";
import { SessionGate } from "./session-gate.js";

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
  registerChatRoute(app, deps, resolver, gate, inFlight);
  registerResponsesRoutes(app, deps, resolver, inFlight, settings.responses === undefined ? undefined : new ResponseStore(settings.responses, deps.logger));
  registerMessagesRoutes(app, deps, resolver, inFlight);
  if (deps.models !== undefined) {
    registerEmbeddingsRoute(app, deps, resolver, deps.models);
    registerCompletionsRoute(app, deps, resolver, deps.models, inFlight);
    registerRerankRoute(app, deps, resolver, deps.models);
    registerTokenizeRoutes(app, deps, resolver, deps.models);
  }

  app.notFound((c) => {
    const mapped = toOpenAiError(new HttpError("not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}`));
    return c.json(inDialect(c.req.path, mapped, requestRecord(c)?.id), mapped.status);
  });
  app.onError((error, c) => {
    const mapped = toOpenAiError(error);
    const { status, body } = mapped;
    // A client that went away cancels its turn: expected, not a server failure.
    const log = requestLogger(c, deps.logger);
    if (body.error.code === "cancelled") log.info({ path: c.req.path, reason: body.error.message }, "request cancelled");
    else if (status >= 500) log.error({ err: error, path: c.req.path }, "request failed");
    else log.debug({ code: body.error.code, path: c.req.path }, "request refused");
    return c.json(inDialect(c.req.path, mapped, requestRecord(c)?.id), status);
  });
  return { app, resolver, gate, inFlight };
}

/**
 * The error body in the shape the route's clients parse: Anthropic's under /v1/messages, OpenAI's
 * elsewhere; `error.request_id` in both, the id a user quotes when asking about the failure.
 */
function inDialect(path: string, mapped: MappedError, requestId: string | undefined): unknown {
  const id = requestId === undefined ? {} : { request_id: requestId };
  if (path === "/v1/messages" || path.startsWith("/v1/messages/")) {
    const body = anthropicError(mapped.status, mapped.body.error.message, mapped.body.error.param);
    return { ...body, error: { ...body.error, ...id } };
  }
  return { error: { ...mapped.body.error, ...id } };
}
