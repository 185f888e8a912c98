import type { MetricsRecorder, RequestLabels, TokenCounts } from "../shared/metrics-recorder.js";
import type { TurnUsage } from "./turn-outcome.js";

/**
 * The front door a turn is counted under: its `endpoint` (stdio: the method, `chat`; `pod`;
 * `acp`) and the API key's name (`none` where there are no keys). The agent and model labels are
 * the turn's own.
 */
export type TurnMeterLabels = Pick<RequestLabels, "endpoint" | "key">;

/** A turn's usage as the metrics count tokens. */
export function turnTokens(usage: TurnUsage): TokenCounts {
  return { prompt: usage.input_tokens, cached: usage.cached_input_tokens ?? 0, generated: usage.output_tokens };
}

/**
 * Where turns' tokens reach the metrics: SessionRunner hands it every turn's usage as the turn
 * ends, whichever front door ran it (a turn that failed or was cancelled counts what its steps
 * had used), under the labels the front door named in `TurnOptions.meter`. Nothing sums usage
 * events but the turn itself (`outcome.usage`): a front door that counts in a request series of
 * its own (HTTP) reads `outcome.usage` and opts out with `meter: false`.
 */
export class TurnMeter {
  constructor(private readonly recorder: MetricsRecorder | undefined) {}

  turnEnded(turn: { agent: string; model: string }, door: TurnMeterLabels | undefined, usage: TurnUsage): void {
    this.recorder?.tokens({ agent: turn.agent, model: turn.model, endpoint: door?.endpoint ?? "none", key: door?.key ?? "none" }, turnTokens(usage));
  }
}
