// Is a TCP port free to listen on? Checked before every spawn: a llama-server that cannot bind
// exits with a vague log line, and worse, a request sent to a port someone else serves would
// silently go to the wrong server.
import { createServer } from "node:net";

/**
 * Tries to bind `host:port` exclusively and releases it at once. EADDRINUSE means another
 * socket listens there (on this address or on a wildcard address covering it).
 */
export function isPortFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") resolve(false);
      else reject(error);
    });
    server.listen({ port, host, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}
