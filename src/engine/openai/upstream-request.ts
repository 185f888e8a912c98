import { cancelledError } from "./openai-errors.js";

/**
 * The lifetime of one streamed upstream request. It has its own AbortController that follows the
 * caller's signal, so the caller's abort, an error, and a consumer that stops iterating early all
 * close the HTTP response: `close()` (in `finally`) aborts it unless the stream was `complete()`d.
 */
export class UpstreamRequest {
  private readonly controller = new AbortController();
  private completed = false;
  private readonly onCallerAbort = (): void => this.controller.abort(this.callerSignal?.reason);

  constructor(private readonly callerSignal: AbortSignal | undefined) {
    if (this.isAborted()) throw cancelledError(callerSignal?.reason);
    callerSignal?.addEventListener("abort", this.onCallerAbort, { once: true });
  }

  /** What the client call is given. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The caller gave up (as opposed to the upstream failing). */
  isAborted(): boolean {
    return this.callerSignal?.aborted === true;
  }

  /** The `cancelled` error for the caller's abort. */
  cancelled(): Error {
    return cancelledError(this.callerSignal?.reason);
  }

  complete(): void {
    this.completed = true;
  }

  close(): void {
    this.callerSignal?.removeEventListener("abort", this.onCallerAbort);
    if (!this.completed) this.controller.abort();
  }
}
