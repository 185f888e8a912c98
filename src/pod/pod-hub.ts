import type { Logger } from "pino";
import type { SessionRunner } from "../agent/session-runner.js";
import type { PodEvent } from "./pod-event-types.js";
import type { PodRequest } from "./pod-request.js";
import { PodSession } from "./pod-session.js";

export interface PodHubOptions {
  sessionId: string;
  podName: string;
  runner: () => SessionRunner;
  /** stdio.coalesce_ms: the merge window for a turn's text deltas (0 = off). */
  coalesceMs?: number;
  logger: Logger;
}

export type PodListener = (event: PodEvent) => void;

/**
 * THE pod core both transports share (the socket server and the direct call, seed 004): one
 * PodSession, a set of listeners that get every event from the moment they register, and the one
 * method dispatch. Every event, `status` and `history` answers included, goes to every listener;
 * only a refusal is handed to `refuse`, which each transport routes (the socket: to the sender).
 */
export class PodHub {
  private readonly listeners = new Set<PodListener>();
  private readonly session: PodSession;

  constructor(private readonly options: PodHubOptions) {
    this.session = new PodSession({
      runner: options.runner,
      sessionId: options.sessionId,
      podName: options.podName,
      broadcast: (event) => this.broadcast(event),
      logger: options.logger,
      coalesceMs: options.coalesceMs ?? 0,
    });
  }

  get sessionId(): string {
    return this.options.sessionId;
  }

  get podName(): string {
    return this.options.podName;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Registers a listener; returns the function that unregisters it (idempotent). */
  listen(listener: PodListener): () => void {
    // Wrapped so one function registered twice is two listeners, each removed by its own handle.
    const entry: PodListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Picks up a turn a previous pod left paused on this session. */
  restore(): Promise<void> {
    return this.session.restore();
  }

  /** Shutdown: a running turn gets `graceMs`, then is cancelled; a paused one stays on disk. */
  stop(graceMs: number): Promise<void> {
    return this.session.stop(graceMs);
  }

  /** One method; a refusal (already_running, not_running, not_paused) goes to `refuse`. */
  handle(request: PodRequest, refuse: (event: PodEvent) => void): void {
    const refused = (event: PodEvent | null): void => {
      if (event !== null) refuse(event);
    };
    switch (request.method) {
      case "run":
        refused(this.session.run(request.input));
        return;
      case "resume":
        refused(this.session.resume());
        return;
      case "cancel":
        refused(this.session.cancel());
        return;
      case "get_status":
        this.broadcast(this.session.status());
        return;
      case "get_history":
        void this.session.history().then((event) => this.broadcast(event));
        return;
      default: {
        const unreachable: never = request;
        throw new Error(`unhandled pod method ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** To every listener registered now; one that throws is logged and the next still gets the event. */
  broadcast(event: PodEvent): void {
    for (const listener of [...this.listeners]) {
      // One unregistered by an earlier listener during this event gets nothing more.
      if (!this.listeners.has(listener)) continue;
      try {
        listener(event);
      } catch (error) {
        this.options.logger.error({ err: error, event: event.event }, "a pod listener threw; the other listeners still get the event");
      }
    }
  }
}
