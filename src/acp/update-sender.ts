import { methods, type AgentContext, type SessionUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";

/** More notifications than this waiting for stdout: the reader is behind, text is merged meanwhile. */
const BUSY_AT = 16;

/**
 * `session/update` notifications of one session, in order. The SDK writes messages in the order
 * they are sent; this keeps count of those not written yet so the turn's text coalescer can hold
 * deltas back while the editor reads slower than the model writes (fewer, larger chunks instead
 * of a growing queue), and so a turn can wait until its updates are out before it answers.
 */
export class UpdateSender {
  private pending = 0;
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: AgentContext,
    private readonly sessionId: string,
    private readonly logger: Logger,
  ) {}

  get busy(): boolean {
    return this.pending >= BUSY_AT;
  }

  send(update: SessionUpdate): void {
    this.pending++;
    const sent = this.client
      .notify(methods.client.session.update, { sessionId: this.sessionId, update })
      .catch((error: unknown) => this.logger.debug({ err: error, update: update.sessionUpdate }, "session/update not sent (connection closed)"))
      .finally(() => this.pending--);
    this.last = sent;
  }

  /** Resolves once every update sent so far has been written (or dropped with the connection). */
  flushed(): Promise<void> {
    return this.last;
  }
}
