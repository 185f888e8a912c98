import type { Hono } from "hono";
import type { HttpMetrics } from "../http-deps.js";

/**
 * GET /metrics: the Prometheus text exposition of this server's registry (docs/operations.md).
 * Registered only with http.metrics; app.ts puts it behind the bearer token unless
 * http.metrics_public.
 */
export function registerMetricsRoute(app: Hono, metrics: HttpMetrics): void {
  app.get("/metrics", async (c) => {
    const { contentType, body } = await metrics.exposition();
    c.header("Cache-Control", "no-store");
    c.header("Content-Type", contentType);
    return c.body(body);
  });
}
