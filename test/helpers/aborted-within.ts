/**
 * Resolves true as soon as `signal` aborts (an event, not a timer), false if it has not after
 * `boundMs`: the bound only keeps a broken build from hanging the test.
 */
export function abortedWithin(signal: AbortSignal, boundMs = 10_000): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(false);
    }, boundMs);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
