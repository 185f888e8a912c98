import { HttpError } from "../http-error.js";

/**
 * Sessions with a turn in flight through this server. The SessionRunner's lock would queue a
 * second turn on the same session; over HTTP a silent wait looks like a hang, so by default
 * (`http.session_queue: false`) the second request is refused with 409 instead.
 */
export class SessionGate {
  private readonly inFlight = new Set<string>();

  constructor(private readonly queue: boolean) {}

  /** Returns the release function; throws 409 `session_busy` when the session is taken and queueing is off. */
  enter(userId: string, sessionId: string): () => void {
    const key = `${userId}/${sessionId}`;
    if (this.queue) return () => undefined;
    if (this.inFlight.has(key)) {
      throw new HttpError("session_busy", `Session ${sessionId} already has a turn in flight; wait for it to finish (or set http.session_queue: true to queue)`, "session_id");
    }
    this.inFlight.add(key);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight.delete(key);
    };
  }

  get size(): number {
    return this.inFlight.size;
  }
}
