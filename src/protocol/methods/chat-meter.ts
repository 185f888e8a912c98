import type { AgentEvent } from "../../agent/events.js";
import type { MetricsRecorder, RequestLabels } from "../../shared/metrics-recorder.js";

/** What one stdio `chat` reports: its turn's events on the way, then its end with a status. */
export interface ChatMeter {
  observe(event: AgentEvent): void;
  /** `status`: "ok", or the failure's error code (a bounded set). Idempotent. */
  done(status: string): void;
}

/** The front door a stdio `chat` turn's tokens are counted under by the runner (`TurnOptions.meter`). */
export const CHAT_TURNS = { endpoint: "chat", key: "none" } as const;

/**
 * The request series for a stdio `chat` call (endpoint "chat", key "none": stdio has no keys), as
 * serve-http counts its requests: in flight, duration, first token. Its turn's tokens are counted
 * by the runner, under the same labels (CHAT_TURNS).
 */
export function meterChat(recorder: MetricsRecorder, modelOf: (agent: string) => string): ChatMeter {
  const started = performance.now();
  const leave = recorder.requestStarted("chat");
  const labels: RequestLabels = { agent: "none", model: "none", ...CHAT_TURNS };
  let firstToken = false;
  let finished = false;
  return {
    observe: (event) => {
      if (event.event === "run_start") {
        labels.agent = event.agent;
        labels.model = modelOf(event.agent);
      } else if ((event.event === "llm_chunk" || event.event === "thinking_chunk") && event.delta !== "" && !firstToken) {
        firstToken = true;
        recorder.firstToken(labels, (performance.now() - started) / 1000);
      }
    },
    done: (status) => {
      if (finished) return;
      finished = true;
      leave();
      recorder.requestDone({ ...labels, status }, (performance.now() - started) / 1000);
    },
  };
}
