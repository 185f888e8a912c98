/**
 * The Pod protocol's event vocabulary (seed 004): `{"event": <name>, "data": {...}}` lines sent
 * to clients. Data fields are exactly the seed's, plus the optional extras documented in
 * docs/protocol-pod.md (`turn_end.reason`, `status.pending`, `error.reason`).
 */
export type PodState = "idle" | "running" | "paused";

export type PodErrorCode = "already_running" | "not_running" | "not_paused" | "provider_error" | "tool_error" | "internal";

/** Why a turn ended without finishing normally; absent when it finished normally or paused. */
export type TurnStopReason = "cancelled" | "error";

export interface PendingCall {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

export type PodEvent =
  | { event: "turn_start"; data: { turn: number } }
  | { event: "turn_end"; data: { turn: number; result: "finished" | "paused"; reason?: TurnStopReason } }
  | { event: "text_delta"; data: { text: string } }
  | { event: "text_done"; data: { text: string } }
  | { event: "thinking_delta"; data: { text: string } }
  | { event: "thinking_done"; data: { text: string } }
  | { event: "tool_call_start"; data: { id: string; name: string } }
  | { event: "tool_call_args_delta"; data: { id: string; json: string } }
  | { event: "tool_call_done"; data: { id: string; name: string; arguments: string } }
  | { event: "tool_result"; data: { id: string; output: string; is_error: boolean } }
  | { event: "status"; data: { state: PodState; session_id: string; pod_name: string; pending?: PendingCall } }
  | { event: "history"; data: { items: unknown[] } }
  | { event: "usage"; data: { input_tokens: number; output_tokens: number } }
  | { event: "error"; data: { code: PodErrorCode; message: string; reason?: string } };

/** What a client sends (seed 004): `{"method": <name>, "params"?: {...}}`; `params` may be omitted where a method takes none. */
export type PodMethodMessage =
  | { method: "run"; params: { input: string } }
  | { method: "resume"; params?: Record<string, unknown> }
  | { method: "cancel"; params?: Record<string, unknown> }
  | { method: "get_status"; params?: Record<string, unknown> }
  | { method: "get_history"; params?: Record<string, unknown> };

export type PodEventName = PodEvent["event"];

/**
 * Deltas are the only events a slow client may lose: the `*_done` event after them carries the
 * whole text, so a client that fell behind still sees every turn, call, result and state change.
 */
export function isDroppable(event: PodEvent): boolean {
  return event.event === "text_delta" || event.event === "thinking_delta" || event.event === "tool_call_args_delta";
}

export function encodePodEvent(event: PodEvent): string {
  return `${JSON.stringify({ event: event.event, data: event.data })}\n`;
}
