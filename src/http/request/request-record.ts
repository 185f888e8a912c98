import type { Context } from "hono";
import type { Logger } from "pino";
import type { AgentEvent } from "../../agent/events.js";
import { turnTokens } from "../../agent/turn-meter.js";
import type { TurnUsage } from "../../agent/turn-outcome.js";
import type { TokenCounts } from "../../shared/metrics-recorder.js";

declare module "hono" {
  interface ContextVariableMap {
    /** What this request did so far (set by the request-context middleware, first of all). */
    requestRecord: RequestRecord;
  }
}

/**
 * What one HTTP request did, gathered while it runs for its metrics and its access-log line: the
 * agent and model it resolved to, the tokens of its turn (its outcome's usage) or generation, its
 * first generated text.
 * Routes reach it through the Hono context (`requestRecord(c)`) and hand it down: the model's
 * resolution and the turn's events fill it. Passed, not found through the async flow: an
 * AsyncLocalStorage would cost every promise of generation on Node 20 (docs/benchmarks.md).
 */
export class RequestRecord {
  readonly startedAt = performance.now();
  agent = "none";
  model = "none";
  readonly tokens: TokenCounts = { prompt: 0, cached: 0, generated: 0 };
  /** True once any usage was reported (a request without a model reports none). */
  hasTokens = false;
  /** ms from the start to the first generated text or thinking; null until then. */
  firstTokenMs: number | null = null;

  constructor(
    readonly id: string,
    /** This request's logger: `request_id` on every line. */
    readonly logger: Logger,
  ) {}

  /** The `model` the request named resolved to this agent (null: a model served directly) and `llama.models` name. */
  resolved(agent: string | null, model: string): void {
    this.agent = agent ?? "none";
    this.model = model;
  }

  /** A turn event of this request (the first delta; how far a long prompt was read, logged at debug). */
  observe(event: AgentEvent): void {
    if ((event.event === "llm_chunk" || event.event === "thinking_chunk") && event.delta !== "") this.firstToken();
    // Every dialect's request (Responses and Messages have no progress event on the wire): an operator sees where a slow request is.
    else if (event.event === "prompt_progress") this.logger.debug({ step: event.step, processed: event.processed, total: event.total, cached: event.cached }, "reading the prompt");
  }

  /** The request's turn ended: its usage, summed by the turn (`outcome.usage`). */
  turnEnded(usage: TurnUsage): void {
    this.addTokens(turnTokens(usage));
  }

  /** Usage of an engine call that is not a turn (completions, embeddings). */
  addTokens(usage: TokenCounts): void {
    this.hasTokens = true;
    this.tokens.prompt += usage.prompt;
    this.tokens.cached += usage.cached;
    this.tokens.generated += usage.generated;
  }

  firstToken(): void {
    this.firstTokenMs ??= performance.now() - this.startedAt;
  }

  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }
}

export function setRequestRecord(c: Context, record: RequestRecord): void {
  c.set("requestRecord", record);
}

/** The request's record; undefined only for an app driven without the request-context middleware. */
export function requestRecord(c: Context): RequestRecord | undefined {
  const record: RequestRecord | undefined = c.get("requestRecord");
  return record;
}

/** The request's logger (`request_id` on every line), or `fallback` outside a request. */
export function requestLogger(c: Context, fallback: Logger): Logger {
  return requestRecord(c)?.logger ?? fallback;
}
