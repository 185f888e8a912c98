import type { ServerResponse } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { Logger } from "pino";
import type { MetricsRecorder, RequestLabels } from "../../shared/metrics-recorder.js";
import { requestIdFor } from "../request/request-id.js";
import { requestKeyName } from "../request/request-key.js";
import { RequestRecord, setRequestRecord } from "../request/request-record.js";

/**
 * The first middleware: gives the request its id (`X-Request-Id` on every response, the same as
 * `request_id` on every line of its logger), puts its record on the context, and once the answer has left
 * (a stream: its last byte, or the client gone) counts it and writes its one access-log line.
 */
export function requestContext(options: { logger: Logger; metrics: MetricsRecorder }): MiddlewareHandler {
  const { metrics } = options;
  return async (c, next) => {
    const id = requestIdFor(c.req.header("x-request-id"));
    const record = new RequestRecord(id, options.logger.child({ request_id: id }));
    const endpoint = endpointOf(c);
    const leave = metrics.requestStarted(endpoint);
    try {
      setRequestRecord(c, record);
      await next();
    } finally {
      c.res.headers.set("X-Request-Id", id);
    }
    const finish = (disconnected: boolean): void => {
      leave();
      const labels: RequestLabels = { agent: record.agent, model: record.model, endpoint, key: requestKeyName(c) };
      const seconds = record.elapsedMs() / 1000;
      metrics.requestDone({ ...labels, status: String(c.res.status) }, seconds);
      if (record.hasTokens) metrics.tokens(labels, record.tokens);
      if (record.firstTokenMs !== null) metrics.firstToken(labels, record.firstTokenMs / 1000);
      if (disconnected) metrics.clientDisconnect(labels);
      record.logger.info(
        {
          method: c.req.method,
          path: c.req.path,
          status: c.res.status,
          key: labels.key,
          agent: labels.agent,
          model: labels.model,
          ...(record.hasTokens ? { prompt_tokens: record.tokens.prompt, cached_tokens: record.tokens.cached, generated_tokens: record.tokens.generated } : {}),
          ...(record.firstTokenMs === null ? {} : { ttft_ms: Math.round(record.firstTokenMs) }),
          duration_ms: Math.round(record.elapsedMs()),
          ...(disconnected ? { disconnected: true } : {}),
        },
        "request",
      );
    };
    // On the real server the answer is written after this returns (a stream for a while): its
    // end is when the response closes. In-process (app.request) there is no socket: now.
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
    if (outgoing === undefined || outgoing.writableFinished) finish(false);
    else outgoing.once("close", () => finish(!outgoing.writableFinished));
  };
}

/** The route pattern that answers (`/v1/responses/:id`), never the raw path; `unmatched` for a 404 without a route. */
function endpointOf(c: Context): string {
  const routes = matchedRoutes(c);
  for (let index = routes.length - 1; index >= 0; index--) {
    const route = routes[index];
    if (route !== undefined && route.method !== "ALL") return route.path;
  }
  return "unmatched";
}
