import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import type { Hono } from "hono";
import type { Logger } from "pino";
import { settlesWithin } from "../../shared/abort.js";
import { settleInFlight } from "../../serving/shutdown-sequence.js";

export interface RunningServer {
  server: Server;
  /** The port actually bound (differs from the requested one for port 0). */
  port: number;
  /**
   * Stops accepting, lets in-flight requests finish for `graceMs`, then calls `cancelTurns` and
   * waits `cancelMs` more (the settle step every server shares) before cutting the remaining
   * connections. Resolves when all are closed.
   */
  close(graceMs: number, logger: Logger, cancelTurns: () => void, cancelMs?: number): Promise<void>;
}

/** Puts the app on a real socket. A listen failure (EADDRINUSE, EACCES) rejects with a one-line message. */
export async function listenHttp(app: Hono, host: string, port: number): Promise<RunningServer> {
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host }) as Server;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => reject(new Error(listenMessage(error, host, port)));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return {
    server,
    port: bound,
    close: async (graceMs, logger, cancelTurns, cancelMs = 2000) => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections would hold close() open; busy ones get the grace period.
      server.closeIdleConnections();
      const connections = { settled: () => closed, abortAll: cancelTurns, describe: () => ({}) };
      if (await settleInFlight(connections, graceMs, logger, "cancelling the turns still running", { afterAbortMs: cancelMs })) return;
      // Connections still open after the cancel are cut (none left when the turns ended in time).
      server.closeAllConnections();
      await settlesWithin(closed, 1000);
    },
  };
}

function listenMessage(error: NodeJS.ErrnoException, host: string, port: number): string {
  const where = `${host}:${port}`;
  if (error.code === "EADDRINUSE") return `cannot listen on ${where}: the port is already in use (another local-ai or llama-server?); pick another with --port or http.port`;
  if (error.code === "EACCES") return `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`;
  if (error.code === "EADDRNOTAVAIL") return `cannot listen on ${where}: the address is not available on this machine (check --host or http.host)`;
  return `cannot listen on ${where}: ${error.message}`;
}
