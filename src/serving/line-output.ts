/**
 * Where a stdio server's outbound lines go. Two implementations, whose drop policies differ:
 * OutboundWriter (v1 and JSON-RPC: bounded, events may be dropped, answers never) and the ACP
 * LineSink (every message kept; a write waits for the stream's `drain`).
 */
export interface LineOutput {
  /** Queues one whole line, never dropped; resolves once it is accepted (waits under backpressure). Never rejects. */
  push(line: string): Promise<void>;
  /** Writes what is queued within `timeoutMs`, then stops; true when all of it was written. */
  close(timeoutMs: number): Promise<boolean>;
}
