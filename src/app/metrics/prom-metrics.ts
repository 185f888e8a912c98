import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { MetricsSnapshot } from "../../protocol/methods/metrics.js";
import type { MetricsRecorder, RequestLabels, TokenCounts, ToolCallLabels } from "../../shared/metrics-recorder.js";

/** What is read at scrape time rather than reported: the scheduler's queue and each loaded model's memory. */
export interface ModelSample {
  /** Model names waiting in the scheduler's queue (a name once per waiting load). */
  queued: readonly string[];
  /** Memory each created model holds now (0 when unloaded). */
  memoryBytes: Readonly<Record<string, number>>;
}

const REQUEST = ["agent", "model", "endpoint", "key"] as const;

/**
 * The MetricsRecorder on prom-client, one Registry per server (never prom-client's global one:
 * two servers in one process, or a test next to a server, must not share counters). Series and
 * their meaning: docs/operations.md.
 */
export class PromMetrics implements MetricsRecorder {
  readonly registry = new Registry();
  private readonly requests: Counter<"agent" | "model" | "endpoint" | "key" | "status">;
  private readonly inFlight: Gauge<"endpoint">;
  private readonly wait: Histogram<"model">;
  private readonly ttft: Histogram<(typeof REQUEST)[number]>;
  private readonly duration: Histogram<(typeof REQUEST)[number]>;
  private readonly prompt: Counter<(typeof REQUEST)[number]>;
  private readonly cached: Counter<(typeof REQUEST)[number]>;
  private readonly generated: Counter<(typeof REQUEST)[number]>;
  private readonly load: Histogram<"model">;
  private readonly tools: Counter<"agent" | "server" | "tool" | "outcome">;
  private readonly approvals: Gauge;
  private readonly disconnects: Counter<(typeof REQUEST)[number]>;

  /** `sample`: read at each scrape (queue depth, model memory); absent until the runtime exists. */
  constructor(sample: () => ModelSample | null) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: "local_ai_requests_total", help: "Requests answered, by status", labelNames: [...REQUEST, "status"], registers });
    this.inFlight = new Gauge({ name: "local_ai_requests_in_flight", help: "Requests being answered now", labelNames: ["endpoint"], registers });
    this.wait = new Histogram({ name: "local_ai_queue_wait_seconds", help: "How long model loads waited in the scheduler's queue for memory", labelNames: ["model"], buckets: [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300], registers });
    this.ttft = new Histogram({ name: "local_ai_time_to_first_token_seconds", help: "From the request's arrival to its first generated text", labelNames: [...REQUEST], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers });
    this.duration = new Histogram({ name: "local_ai_request_duration_seconds", help: "From the request's arrival to the end of its answer", labelNames: [...REQUEST], buckets: [0.01, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers });
    this.prompt = new Counter({ name: "local_ai_prompt_tokens_total", help: "Prompt tokens evaluated or served from the cache", labelNames: [...REQUEST], registers });
    this.cached = new Counter({ name: "local_ai_cached_prompt_tokens_total", help: "Prompt tokens served from the KV cache (part of the prompt tokens)", labelNames: [...REQUEST], registers });
    this.generated = new Counter({ name: "local_ai_generated_tokens_total", help: "Tokens generated", labelNames: [...REQUEST], registers });
    this.load = new Histogram({ name: "local_ai_model_load_seconds", help: "How long a model took to load (after any wait for memory)", labelNames: ["model"], buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers });
    this.tools = new Counter({ name: "local_ai_tool_calls_total", help: "Tool calls of the agent, by outcome", labelNames: ["agent", "server", "tool", "outcome"], registers });
    this.approvals = new Gauge({ name: "local_ai_approvals_waiting", help: "Tool approvals being asked of a user right now", registers });
    this.disconnects = new Counter({ name: "local_ai_client_disconnects_total", help: "Requests whose client went away before the answer was complete", labelNames: [...REQUEST], registers });
    new Gauge({
      name: "local_ai_queue_depth",
      help: "Model loads waiting in the scheduler's queue for memory",
      labelNames: ["model"],
      registers,
      collect() {
        this.reset();
        const now = sample();
        if (now === null) return;
        for (const model of Object.keys(now.memoryBytes)) this.set({ model }, 0);
        for (const model of now.queued) this.inc({ model });
      },
    });
    new Gauge({
      name: "local_ai_model_memory_bytes",
      help: "Memory each model holds (embedded: weights and context; llama-server: the child's resident RAM)",
      labelNames: ["model"],
      registers,
      collect() {
        this.reset();
        for (const [model, bytes] of Object.entries(sample()?.memoryBytes ?? {})) this.set({ model }, bytes);
      },
    });
  }

  queueWait(model: string, seconds: number): void {
    this.wait.observe({ model }, seconds);
  }

  modelLoad(model: string, seconds: number): void {
    this.load.observe({ model }, seconds);
  }

  toolCall(labels: ToolCallLabels): void {
    this.tools.inc({ ...labels });
  }

  approvalWaiting(): () => void {
    this.approvals.inc();
    return once(() => this.approvals.dec());
  }

  requestStarted(endpoint: string): () => void {
    this.inFlight.inc({ endpoint });
    return once(() => this.inFlight.dec({ endpoint }));
  }

  requestDone(labels: RequestLabels & { status: string }, seconds: number): void {
    this.requests.inc({ ...labels });
    this.duration.observe(requestLabels(labels), seconds);
  }

  firstToken(labels: RequestLabels, seconds: number): void {
    this.ttft.observe(requestLabels(labels), seconds);
  }

  tokens(labels: RequestLabels, usage: TokenCounts): void {
    const only = requestLabels(labels);
    // Zero increments still create the series, so a dashboard sees the model from its first request.
    this.prompt.inc(only, usage.prompt);
    this.cached.inc(only, usage.cached);
    this.generated.inc(only, usage.generated);
  }

  clientDisconnect(labels: RequestLabels): void {
    this.disconnects.inc(requestLabels(labels));
  }

  /** The text exposition format (GET /metrics). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** The same snapshot as JSON (the stdio `metrics` method): one entry per series, every sample with its labels. */
  async snapshot(): Promise<MetricsSnapshot> {
    const metrics = await this.registry.getMetricsAsJSON();
    return {
      metrics: metrics.map((metric) => ({
        name: metric.name,
        help: metric.help,
        type: metric.type as unknown as MetricsSnapshot["metrics"][number]["type"],
        samples: (metric.values as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>)
          .filter((sample) => Number.isFinite(sample.value))
          .map((sample) => ({
            name: sample.metricName ?? metric.name,
            labels: Object.fromEntries(Object.entries(sample.labels).map(([key, value]) => [key, String(value)])),
            value: sample.value,
          })),
      })),
    };
  }
}

function requestLabels(labels: RequestLabels): RequestLabels {
  return { agent: labels.agent, model: labels.model, endpoint: labels.endpoint, key: labels.key };
}

function once(run: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    run();
  };
}
