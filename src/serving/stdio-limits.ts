/** The limits of every stdio server (from the config's `stdio:` section; see docs/config.md). */
export interface StdioLimits {
  maxLineBytes: number;
  writerQueueSize: number;
  flushTimeoutMs: number;
  shutdownGraceMs: number;
  /** Requests in flight at most: v1 and JSON-RPC answer `busy` past it (control methods still run); ACP stops reading stdin until one is answered. */
  maxInFlight: number;
}
