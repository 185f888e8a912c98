import type { z } from "zod";
import type { ERROR_CODES } from "../shared/runtime-error.js";
import type { chatParams, detokenizeParams, planParams, tokenizeParams, warmUpParams } from "../protocol/methods/params-schemas.js";
import type { chatResult, doctorResult, initializeResult, metricsResult, planResult, pullEvents, psResult, pullResult, unloadResult, warmUpResult, tokenizeResult, detokenizeResult } from "../protocol/methods/result-schemas.js";
import type { AgentEventWire } from "../wire/agent-event-schema.js";

/**
 * The protocol's types for hosts, derived from the zod schemas the server validates with and the
 * JSON Schema in schema/ is generated from: one source, so the client's types cannot drift from
 * the wire. Type-only imports: nothing here exists at run time (importing the client loads no zod).
 */

/** Drops the index signature `.loose()` params carry, so a typo in a param name is a compile error. */
type Known<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

export type RequestId = string | number;

/** Error codes local-ai sends (`invalid_params` is sent as `invalid_request`). */
export type WireErrorCode = Exclude<(typeof ERROR_CODES)[number], "invalid_params">;

export type InitializeResult = z.output<typeof initializeResult>;
export type DoctorReport = z.output<typeof doctorResult>;
export type PlanParams = Known<z.input<typeof planParams>>;
export type PlanReport = z.output<typeof planResult>;
export type ChatParams = Known<z.input<typeof chatParams>>;
export type ChatResult = z.output<typeof chatResult>;
/** One event of a chat turn: the AgentEvent wire union, discriminated on `event`. */
export type ChatEvent = AgentEventWire;
export type ChatEventName = ChatEvent["event"];
export type WarmUpParams = Known<z.input<typeof warmUpParams>>;
export type WarmUpResult = z.output<typeof warmUpResult>;
export type PullResult = z.output<typeof pullResult>;
export type PullProgress = Omit<z.output<typeof pullEvents>, "event">;
export type UnloadResult = z.output<typeof unloadResult>;
export type PsResult = z.output<typeof psResult>;
/** The server's metrics: every series with its samples (docs/operations.md). */
export type MetricsResult = z.output<typeof metricsResult>;
export type TokenizeParams = z.input<typeof tokenizeParams>;
export type TokenizeResult = z.output<typeof tokenizeResult>;
export type DetokenizeParams = z.input<typeof detokenizeParams>;
export type DetokenizeResult = z.output<typeof detokenizeResult>;
export interface StatusResult {
  status: "ok";
}
