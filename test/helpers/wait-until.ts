// Waits for a condition over state that changes on events (a child's output, a server's holds):
// re-checked on each event, never on a timer. The timeout only bounds a hang.
import type { EventEmitter } from "node:events";

export function waitUntil(
  condition: () => boolean,
  triggers: ReadonlyArray<{ emitter: EventEmitter; event: string }>,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      clearTimeout(timer);
      for (const { emitter, event } of triggers) emitter.off(event, check);
    };
    const check = (): void => {
      if (!condition()) return;
      stop();
      resolve();
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`condition not met within ${timeoutMs} ms: ${describe()}`));
    }, timeoutMs);
    for (const { emitter, event } of triggers) emitter.on(event, check);
    check();
  });
}
