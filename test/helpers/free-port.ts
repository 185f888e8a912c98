import { randomInt } from "node:crypto";
import { createServer } from "node:net";

/**
 * Below Linux's ephemeral range (32768-60999 by default): the OS never hands these out to a
 * `listen(0)` or as the source port of a connection, so a port a test was given stays its own
 * while it releases and rebinds it (a server killed and restarted on its configured port). A port
 * from `listen(0)` could be taken in that moment by any server of a test running in parallel.
 */
const FIRST = 20_000;
const LAST = 32_000;

/** A loopback port that was free a moment ago and that no port-0 bind will be given. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = randomInt(FIRST, LAST + 1);
    if (await bindsOn(port)) return port;
  }
  throw new Error(`no free loopback port found in ${FIRST}-${LAST}`);
}

function bindsOn(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE" || error.code === "EACCES") resolve(false);
      else reject(error);
    });
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resolve(true)));
  });
}
