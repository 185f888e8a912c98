import { RequestError } from "@agentclientprotocol/sdk";
import type { AcpSession } from "./acp-session.js";

/** The sessions open on this connection (new or loaded), by id. */
export class AcpSessions {
  private readonly open = new Map<string, AcpSession>();

  /** The open session, or ACP's "not found" (-32002 with data.sessionId). */
  get(sessionId: string): AcpSession {
    const session = this.open.get(sessionId);
    if (session === undefined) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  find(sessionId: string): AcpSession | undefined {
    return this.open.get(sessionId);
  }

  /** A session loaded again replaces the open one (its tools are stopped first). */
  async add(session: AcpSession): Promise<void> {
    const previous = this.open.get(session.id);
    this.open.set(session.id, session);
    if (previous !== undefined && previous !== session) await previous.close();
  }

  async close(sessionId: string): Promise<void> {
    const session = this.open.get(sessionId);
    if (session === undefined) throw RequestError.sessionNotFound(sessionId);
    this.open.delete(sessionId);
    await session.close();
  }

  /** Running prompts stop; used when shutdown's grace period is over. */
  cancelAll(reason: string): void {
    for (const session of this.open.values()) session.cancel(reason);
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(sessions.map((session) => session.close()));
  }
}
