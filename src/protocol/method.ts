import type { Logger } from "pino";
import type { ZodType } from "zod";
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

/** What params validation needs. A zod schema is one; `noParams` is one without zod. */
export interface ParamsSchema<Params> {
  safeParse(input: unknown): { success: true; data: Params } | { success: false; error: { issues: ReadonlyArray<{ path: readonly PropertyKey[]; message: string }> } };
}

export interface MethodDefinition<Params = unknown, Result = unknown> {
  /**
   * The schema, or a loader called on the method's first use: zod schemas live in
   * methods/params-schemas.ts, imported only then, so `ping` never loads zod (cold start).
   */
  params: ParamsSchema<Params> | (() => Promise<ParamsSchema<Params>>);
  /**
   * What the method answers (methods/result-schemas.ts). Never loaded to serve a request: the JSON
   * Schema build (schema/) and the tests load it. Required, so a new method cannot ship without
   * its answer described; `handle` is type-checked against it.
   */
  result: () => Promise<ZodType<Result>>;
  /** The events the method streams before its answer, as a union discriminated on `event`; absent = none. */
  events?: () => Promise<ZodType>;
  handle(params: Params, context: MethodContext): Promise<NoInfer<Result>>;
  /**
   * Cheap methods that steer the server (ping, cancel, shutdown): always read and run, however
   * many requests are in flight, so a host can always stop what it started.
   */
  control?: true;
}

export type MethodTable = ReadonlyMap<string, MethodDefinition<never>>;

/** Keeps each method's params type tied to its handler while the table stays homogeneous. */
export function defineMethod<Params, Result>(definition: MethodDefinition<Params, Result>): MethodDefinition<never> {
  return definition as unknown as MethodDefinition<never>;
}
