import type { MetricsSnapshot } from "../../protocol/methods/metrics.js";
import { noMetrics, type MetricsRecorder } from "../../shared/metrics-recorder.js";
import type { Runtime, RuntimeOptions } from "./runtime.js";

/** A runtime built (and its module graph imported) on first use; closing an unbuilt one is free. */
export interface LazyRuntime {
  get(): Promise<Runtime>;
  /** The runtime's metrics as JSON (builds the runtime); an empty snapshot where metrics are off. */
  metrics(): Promise<MetricsSnapshot>;
  /** Where the runtime reports (builds the runtime); `noMetrics` where metrics are off. */
  recorder(): Promise<MetricsRecorder>;
  close(): Promise<void>;
}

interface Built {
  runtime: Runtime;
  recorder: MetricsRecorder;
  snapshot: () => Promise<MetricsSnapshot>;
}

/**
 * serve-stdio answers `initialize` and `ping` without the runtime: the composition root pulls in
 * the engines, the MCP client, the store and their dependencies, which a host pays for only when
 * it calls a method that needs them (doctor, plan, chat, warm_up). The options wait for the
 * config, which serve-stdio may still be parsing in the background (src/app/serve/stdio-config.ts).
 * With `metrics`, prom-client is imported with the runtime (not at start: it costs ~0.2 s) and
 * the runtime reports to a registry of its own.
 */
export function lazyRuntime(options: Promise<RuntimeOptions>, settings: { metrics: boolean } = { metrics: false }): LazyRuntime {
  let runtime: Promise<Built> | null = null;
  const build = async (): Promise<Built> => {
    const [{ createRuntime }, resolved] = await Promise.all([import("./runtime.js"), options]);
    if (!settings.metrics) return { runtime: createRuntime(resolved), recorder: noMetrics, snapshot: () => Promise.resolve({ metrics: [] }) };
    const { PromMetrics } = await import("../metrics/prom-metrics.js");
    const sampled: { runtime: Runtime | null } = { runtime: null };
    const metrics = new PromMetrics(() => sampled.runtime?.modelSample() ?? null);
    sampled.runtime = createRuntime({ ...resolved, metrics });
    return { runtime: sampled.runtime, recorder: metrics, snapshot: () => metrics.snapshot() };
  };
  const get = (): Promise<Built> => (runtime ??= build());
  return {
    get: async () => (await get()).runtime,
    metrics: async () => (await get()).snapshot(),
    recorder: async () => (await get()).recorder,
    close: async () => {
      if (runtime === null) return;
      await (await runtime).runtime.close();
    },
  };
}
