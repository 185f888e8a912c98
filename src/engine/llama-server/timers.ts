// Waits for the supervisor's housekeeping. Bounded waits that a caller is awaiting (polling a
// process or a port, restart backoff) keep the loop alive like any pending I/O; open-ended
// background ones (periodic health checks, the SIGKILL escalation timer while the child's pipes
// already hold the loop) pass `unref: true` so they are never why a finished process stays up.
import { abortError } from "../../shared/abort.js";

export function sleep(ms: number, signal?: AbortSignal, options: { unref?: boolean } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (options.unref === true) timer.unref();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Rejects with the abort reason as soon as `signal` fires; otherwise settles like `promise`. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
