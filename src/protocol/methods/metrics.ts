import { defineMethod, type MethodDefinition } from "../method.js";

/** One series of the metrics snapshot: every sample with its labels (histograms: `_bucket` with `le`, `_sum`, `_count`). */
export interface MetricsSeries {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram" | "summary";
  samples: Array<{ name: string; labels: Record<string, string>; value: number }>;
}

/** The server's metrics as JSON: the series GET /metrics exposes (docs/operations.md). */
export interface MetricsSnapshot {
  metrics: MetricsSeries[];
}

/**
 * `metrics`: the same snapshot serve-http's `GET /metrics` gives Prometheus, as JSON, for a host
 * app's own dashboard. The registry is the server's own (counters start at its start).
 */
export function metricsMethod(snapshot: () => Promise<MetricsSnapshot>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.metricsParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.metricsResult),
    handle: async () => snapshot(),
    // Cheap and read-only, like ping: a host's dashboard gets it however many turns are in flight.
    control: true,
  });
}
