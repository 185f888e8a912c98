import type { RuntimeError } from "../shared/runtime-error.js";
import type { RequestId } from "./messages.js";

/** One method call read from a line. A notification (JSON-RPC, no `id`) is run but never answered. */
export interface InboundCall {
  kind: "call";
  id: RequestId | null;
  method: string;
  params: unknown;
  notification: boolean;
}

/** An entry that is not a valid call: `frame` is its answer, or null when none may be sent. */
export interface InboundReject {
  kind: "reject";
  frame: object | null;
  /** Why, for the debug log. */
  reason: string;
}

export type Inbound = InboundCall | InboundReject;

/** A line holds one message, or (JSON-RPC) a batch whose answers go out together as one array. */
export type ParsedLine = { batch: false; item: Inbound } | { batch: true; items: Inbound[] };

/**
 * What differs between the stdio wire formats (seed 000 v1, seed 003 JSON-RPC 2.0). The server
 * (line reading, in-flight tracking, cancellation, the bounded writer, shutdown) is shared; a
 * dialect only turns lines into calls and outcomes into frames.
 */
export interface StdioDialect {
  readonly name: "v1" | "jsonrpc";
  parseLine(text: string): ParsedLine;
  /** The answer to a line over the cap (its bytes were discarded unread). */
  overflowFrame(bytes: number, maxLineBytes: number): object;
  /** An envelope-level refusal of a call that did parse (a duplicate in-flight id). */
  invalidRequestFrame(id: RequestId | null, message: string): object;
  resultFrame(id: RequestId | null, result: unknown): object;
  /** `thrown` is what the handler threw, for wire formats that name its class (JSON-RPC -32603). */
  errorFrame(id: RequestId | null, error: RuntimeError, thrown: unknown): object;
  eventFrame(id: RequestId | null, event: string, fields: Record<string, unknown>): object;
}
