import type { Pod, PodEvent } from "../../src/app/create-pod.js";

/**
 * A listener registered on an in-process pod (createPod) that keeps every event in order; waits
 * resolve on events, never on sleeps (PodSocketClient's counterpart for the direct call).
 */
export class PodListenerLog {
  readonly events: PodEvent[] = [];
  private waiters: Array<() => void> = [];
  readonly unlisten: () => void;

  constructor(pod: Pod, onEvent?: (event: PodEvent, log: PodListenerLog) => void) {
    this.unlisten = pod.listen((event) => {
      this.events.push(event);
      for (const waiter of [...this.waiters]) waiter();
      onEvent?.(event, this);
    });
  }

  /** The first event at index >= `from` that matches (seen or future). */
  waitFor(predicate: (event: PodEvent) => boolean, from = 0, timeoutMs = 30_000): Promise<PodEvent> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.events.slice(from).find(predicate);
        if (found === undefined) return false;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((waiter) => waiter !== onEvent);
        resolve(found);
        return true;
      };
      const onEvent = (): void => void check();
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== onEvent);
        reject(new Error(`timed out waiting for an event; got ${JSON.stringify(this.events.slice(from).map((e) => e.event))}`));
      }, timeoutMs);
      if (!check()) this.waiters.push(onEvent);
    });
  }

  /** The next event with this name from now on. */
  next(name: PodEvent["event"]): Promise<PodEvent> {
    return this.waitFor((event) => event.event === name, this.events.length);
  }

  /** The next `status` with this state from now on. */
  nextState(state: "idle" | "running" | "paused"): Promise<PodEvent> {
    return this.waitFor((event) => event.event === "status" && event.data.state === state, this.events.length);
  }
}
