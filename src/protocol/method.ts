import type { Logger } from "pino";
import type { z } from "zod";
import type { RequestId } from "./messages.js";

/** What a method handler may do besides returning its result. */
export interface MethodContext {
  /** null for a JSON-RPC notification or a JSON-RPC request whose id is null. */
  id: RequestId | null;
  signal: AbortSignal;
  log: Logger;
  /** Streams an event for this request (best-effort: may be dropped under backpressure). */
  emit(event: string, fields?: Record<string, unknown>): void;
  /** True while output waits for the reader (it has not taken what was written). */
  outputBusy?: () => boolean;
}

export interface MethodDefinition<Params = unknown> {
  params: z.ZodType<Params>;
  handle(params: Params, context: MethodContext): Promise<unknown>;
}

export type MethodTable = ReadonlyMap<string, MethodDefinition<never>>;

/** Keeps each method's params type tied to its handler while the table stays homogeneous. */
export function defineMethod<Params>(definition: MethodDefinition<Params>): MethodDefinition<never> {
  return definition as unknown as MethodDefinition<never>;
}
