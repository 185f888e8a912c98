/**
 * What the agent, engine and front-door layers report for the metrics (docs/operations.md). An
 * interface here, in the lowest layer, so they report without importing prom-client: the
 * composition root builds the implementation (`app/metrics/prom-metrics.ts`) and hands it down. Every
 * label value must be bounded: configured names (agents, models, tools, servers, keys), route
 * patterns, statuses; never a session id or user text.
 */
export interface MetricsRecorder {
  /** A model load waited this long in the scheduler's queue before it was admitted. */
  queueWait(model: string, seconds: number): void;
  /** A model went from unloaded to loaded in this long (admission to the load's first answer). */
  modelLoad(model: string, seconds: number): void;
  /** A tool call of the agent settled (`outcome`: the ToolStatus). */
  toolCall(labels: ToolCallLabels): void;
  /** An approval is being asked mid-turn; the returned function says it was answered (idempotent). */
  approvalWaiting(): () => void;
  /** A request (HTTP, or a stdio chat) began; the returned function says it ended (idempotent). */
  requestStarted(endpoint: string): () => void;
  /** A request ended with this status (an HTTP status, or a stdio outcome), after this long. */
  requestDone(labels: RequestLabels & { status: string }, seconds: number): void;
  /** The first generated text of a request came this long after the request began. */
  firstToken(labels: RequestLabels, seconds: number): void;
  /** Tokens of a request's turn or generation. */
  tokens(labels: RequestLabels, usage: TokenCounts): void;
  /** The client went away before its answer was complete. */
  clientDisconnect(labels: RequestLabels): void;
}

/** The labels every request series has (unknown parts are "none"). */
export interface RequestLabels {
  agent: string;
  model: string;
  /** The route pattern (`/v1/chat/completions`, `/v1/responses/:id`) or stdio method; never a raw path. */
  endpoint: string;
  /** The name of the API key the request authenticated with ("default", or "none"). */
  key: string;
}

export interface ToolCallLabels {
  agent: string;
  server: string;
  tool: string;
  outcome: string;
}

export interface TokenCounts {
  prompt: number;
  cached: number;
  generated: number;
}

const nothing = (): void => undefined;

/** Metrics off: every report is dropped. Stateless, so one shared instance is safe. */
export const noMetrics: MetricsRecorder = Object.freeze({
  queueWait: nothing,
  modelLoad: nothing,
  toolCall: nothing,
  approvalWaiting: () => nothing,
  requestStarted: () => nothing,
  requestDone: nothing,
  firstToken: nothing,
  tokens: nothing,
  clientDisconnect: nothing,
});
